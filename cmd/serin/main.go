// Command serin is the command line of serin, progressive delivery for Flux
// users. Installed as kubectl-serin it also runs as `kubectl serin`: it does
// not look at the name it was started by.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/serin-dev/serin/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := cli.NewRootCommand().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "✗", err)
		os.Exit(1)
	}
}
