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

// Command serin is the command line of serin, progressive delivery for Flux
// users. Installed as kubectl-serin (a copy or a link) it is kubectl's
// plugin `kubectl serin`: the commands are the same, and its help says
// `kubectl serin`.
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
	root := cli.NewRootCommand()
	cli.SetDisplayName(root, cli.DisplayName(os.Args[0]))
	err := root.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "✗", err)
		os.Exit(cli.ExitCode(err))
	}
}
