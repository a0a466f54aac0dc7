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
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/canarywatch"
)

// canaryRowPrinter prints the rows of `serin get canaries`. When watching it
// prints the header once, with the first rows, and afterwards one row for
// every change of a Canary's row.
type canaryRowPrinter struct {
	out           io.Writer
	scope         canaryScope
	withNamespace bool
	noHeader      bool
	colors        palette

	headerPrinted bool
	lastRows      map[types.NamespacedName]string
}

func newCanaryRowPrinter(out io.Writer, opts getCanariesOptions, scope canaryScope) *canaryRowPrinter {
	return &canaryRowPrinter{
		out:           out,
		scope:         scope,
		withNamespace: opts.allNamespaces,
		noHeader:      opts.noHeader,
		colors:        paletteFor(out),
		lastRows:      map[types.NamespacedName]string{},
	}
}

// printTable prints the Canaries that pass the status selector as one table.
func (p *canaryRowPrinter) printTable(canaries []v1alpha1.Canary) error {
	sortCanaries(canaries)
	var rows [][]string
	for i := range canaries {
		if p.scope.conditions.matches(canaries[i].Status.Conditions) {
			rows = append(rows, canaryRow(&canaries[i], p.withNamespace, p.colors))
		}
	}
	var header []string
	if !p.noHeader {
		header = canaryHeader(p.withNamespace)
	}
	return writeTable(p.out, header, rows)
}

// printChanged prints the rows that differ from the last ones printed for
// the same Canaries; the first call prints the header.
func (p *canaryRowPrinter) printChanged(canaries []v1alpha1.Canary) error {
	sortCanaries(canaries)
	var rows [][]string
	for i := range canaries {
		canary := &canaries[i]
		if !p.scope.matches(canary) || !p.scope.conditions.matches(canary.Status.Conditions) {
			continue
		}
		row := canaryRow(canary, p.withNamespace, p.colors)
		key := client.ObjectKeyFromObject(canary)
		if joined := strings.Join(row, "\t"); p.lastRows[key] != joined {
			p.lastRows[key] = joined
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	var header []string
	if !p.noHeader && !p.headerPrinted {
		header = canaryHeader(p.withNamespace)
		p.headerPrinted = true
	}
	return writeTable(p.out, header, rows)
}

// watch lists the Canaries, prints them, then prints every change until ctx
// ends, which is an error: the watch ran into --timeout. A watch the server
// closes or expires is started again from a new list.
func (p *canaryRowPrinter) watch(ctx context.Context, kube client.WithWatch, timeout time.Duration) error {
	printRows := canarywatch.Funcs{
		Listed: p.printChanged,
		Changed: func(canary *v1alpha1.Canary, deleted bool) error {
			if deleted {
				return nil
			}
			return p.printChanged([]v1alpha1.Canary{*canary})
		},
	}
	for {
		err := canarywatch.Follow(ctx, kube, p.scope.listOptions(), printRows)
		switch {
		case ctx.Err() != nil:
			return watchError(ctx, ctx.Err(), timeout)
		case !canarywatch.Restartable(err):
			return watchError(ctx, err, timeout)
		}
		select {
		case <-ctx.Done():
			return watchError(ctx, ctx.Err(), timeout)
		case <-time.After(canarywatch.RestartDelay):
		}
	}
}

func watchError(ctx context.Context, err error, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("stopped watching after --timeout %s", timeout)
	}
	return err
}
