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

package testbed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// notificationControllerModule is the wrapper module that pins and builds
// notification-controller (hack/testbed/build.sh notification-controller).
const notificationControllerModule = "hack/testbed/modules/notification-controller"

// NotificationController is Flux's notification-controller running against
// the testbed as a process: Alerts and Providers are matched and Providers
// called for real.
type NotificationController struct {
	// EventsURL is its event receiver, the agent's --events-addr.
	EventsURL string
}

// StartNotificationController installs notification-controller's CRDs
// (Alert, Provider, Receiver, from config/crd/bases of the module pinned
// under root/hack/testbed/modules/notification-controller) and starts it,
// watching all namespaces with a 1 s rate-limit window, and waits until it
// is ready. root is the serin module's directory.
func (tb *Testbed) StartNotificationController(ctx context.Context, root string) (*NotificationController, error) {
	bin := filepath.Join(tb.env.BinaryAssetsDirectory, "notification-controller")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("notification-controller not built: run hack/testbed/build.sh notification-controller (make testbed-binaries): %w", err)
	}
	crds, err := notificationControllerCRDs(ctx, root)
	if err != nil {
		return nil, err
	}
	if _, err := envtest.InstallCRDs(tb.Config, envtest.CRDInstallOptions{Paths: []string{crds}, ErrorIfPathMissing: true}); err != nil {
		return nil, fmt.Errorf("failed to install the notification-controller CRDs: %w", err)
	}

	ports, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(ports[i]) }
	if err := tb.startProcess(bin, []string{"KUBECONFIG=" + tb.Kubeconfig, "RUNTIME_NAMESPACE=flux-system"},
		"--watch-all-namespaces",
		"--metrics-addr="+addr(0), "--health-addr="+addr(1),
		"--events-addr="+addr(2), "--receiverAddr="+addr(3),
		"--rate-limit-interval=1s",
		"--log-level=debug", "--log-encoding=console",
	); err != nil {
		return nil, err
	}
	if err := tb.waitReady(ctx, "http://"+addr(1)+"/readyz"); err != nil {
		return nil, err
	}
	return &NotificationController{EventsURL: "http://" + addr(2) + "/"}, nil
}

// notificationControllerCRDs returns config/crd/bases of the
// notification-controller module the wrapper module pins, downloading the
// module when the cache lacks it.
func notificationControllerCRDs(ctx context.Context, root string) (string, error) {
	dir, err := moduleDir(ctx, filepath.Join(root, notificationControllerModule), "github.com/fluxcd/notification-controller")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "config", "crd", "bases"), nil
}
