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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
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
	for {
		list := &v1alpha1.CanaryList{}
		if err := kube.List(ctx, list, p.scope.listOptions()...); err != nil {
			return watchError(ctx, err, timeout)
		}
		err := p.follow(ctx, kube, list)
		switch {
		case ctx.Err() != nil:
			return watchError(ctx, ctx.Err(), timeout)
		case err != nil && !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err):
			return err
		}
		select {
		case <-ctx.Done():
			return watchError(ctx, ctx.Err(), timeout)
		case <-time.After(watchRestartDelay):
		}
	}
}

// watchRestartDelay keeps a watch that the server keeps closing from
// turning into a busy loop.
const watchRestartDelay = time.Second

// follow prints the listed Canaries, then the changes after the list, until
// the watch ends.
func (p *canaryRowPrinter) follow(ctx context.Context, kube client.WithWatch, list *v1alpha1.CanaryList) error {
	fromList := &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}}
	watcher, err := kube.Watch(ctx, &v1alpha1.CanaryList{}, append(p.scope.listOptions(), fromList)...)
	if err != nil {
		return err
	}
	defer watcher.Stop()
	if err := p.printChanged(list.Items); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case event, ok := <-watcher.ResultChan():
			if !ok {
				return nil
			}
			if event.Type == watch.Error {
				return apierrors.FromObject(event.Object)
			}
			canary, isCanary := event.Object.(*v1alpha1.Canary)
			if !isCanary || event.Type == watch.Deleted {
				continue
			}
			if err := p.printChanged([]v1alpha1.Canary{*canary}); err != nil {
				return err
			}
		}
	}
}

func watchError(ctx context.Context, err error, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("stopped watching after --timeout %s", timeout)
	}
	return err
}
