/*
Copyright 2026 The serin authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/serin-dev/serin/internal/dashboard"
)

// dashboardOptions are the flags of `serin dashboard`.
type dashboardOptions struct {
	address       string
	port          int
	allNamespaces bool
	open          bool
}

func newDashboardCommand(env *environment) *cobra.Command {
	opts := dashboardOptions{address: "127.0.0.1", port: 3100}
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Serve a web dashboard of the Canaries on this machine",
		Long: `Serve a web dashboard on this machine: the Canaries with their phase, weight,
revision and readiness, updated live; for each Canary, charts of the weight
and of every check's values against its range at each analysis step, the
webhooks' verdicts, the previous rollouts, the conditions, and buttons that
promote, abort, retry and revert as the commands of those names do; and the
CanaryGroups, each release's members side by side on one time line.

The dashboard reads and acts through your kubeconfig, with its permissions and
no others; it listens on 127.0.0.1 unless --address says otherwise. It runs
until interrupted (Ctrl-C), or for --timeout when that flag is given.`,
		Example: `  # The Canaries of the current namespace, at http://127.0.0.1:3100/
  serin dashboard

  # Every namespace, on another port, opened in the browser
  serin dashboard -A --port 8080 --open`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return opts.run(cmd, env)
		},
	}
	flags := cmd.Flags()
	flags.StringVar(&opts.address, "address", opts.address, "the address to listen on; anything but a loopback address exposes the dashboard to the network")
	flags.IntVar(&opts.port, "port", opts.port, "the port to listen on (0 picks a free one)")
	flags.BoolVarP(&opts.allNamespaces, "all-namespaces", "A", false, "show the Canaries of all namespaces")
	flags.BoolVar(&opts.open, "open", false, "open the dashboard in the default browser")
	return cmd
}

func (o dashboardOptions) run(cmd *cobra.Command, env *environment) error {
	namespace := ""
	if !o.allNamespaces {
		var err error
		if namespace, err = env.namespace(); err != nil {
			return err
		}
	}
	kube, err := env.newClient()
	if err != nil {
		return err
	}
	exposed := o.address != "localhost"
	if ip := net.ParseIP(o.address); ip != nil && ip.IsLoopback() {
		exposed = false
	}
	var access string
	if exposed {
		// Beyond loopback, the page (and the token it acts with) is for
		// whoever has the URL printed below, not whoever reaches the port.
		if access, err = newAccessToken(); err != nil {
			return err
		}
	}
	server, err := dashboard.New(kube, dashboard.Options{Namespace: namespace, Now: env.now, Log: cmd.ErrOrStderr(), AccessToken: access})
	if err != nil {
		return err
	}
	listener, err := net.Listen("tcp", net.JoinHostPort(o.address, strconv.Itoa(o.port)))
	if err != nil {
		return fmt.Errorf("starting the dashboard: %w", err)
	}
	url := dashboardURL(listener.Addr().(*net.TCPAddr))
	log := statusLog{cmd.ErrOrStderr()}
	if exposed {
		url += "?" + dashboard.AccessParameter + "=" + access
		log.warningf("the dashboard listens on %s: whoever has the URL below reads and acts on the Canaries with your permissions; "+
			"share it as you would your kubeconfig (the traffic is plain HTTP: put it behind TLS to leave the machine)", listener.Addr())
	}
	fmt.Fprintf(cmd.OutOrStdout(), "serin dashboard at %s (Ctrl-C to stop)\n", url)
	if o.open {
		if err := openBrowser(url); err != nil {
			log.warningf("could not open a browser (%v): open %s", err, url)
		}
	}

	ctx := cmd.Context()
	if cmd.Flags().Changed("timeout") {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, env.timeout)
		defer cancel()
	}
	return server.Serve(ctx, listener)
}

// newAccessToken is the dashboard's access token beyond loopback: 32
// random bytes.
func newAccessToken() (string, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", fmt.Errorf("making the dashboard's access token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(secret), nil
}

// dashboardURL is where a browser on this machine finds the dashboard:
// a loopback address when it listens on all of them.
func dashboardURL(addr *net.TCPAddr) string {
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(addr.Port)) + "/"
}

// openBrowser opens url in the default browser without waiting for it;
// tests replace it.
var openBrowser = func(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
