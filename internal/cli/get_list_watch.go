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

	"github.com/serin-dev/serin/internal/canarywatch"
)

// rowPrinter prints the rows of `serin get canaries` or `serin get
// groups`. When watching it prints the header once, with the first rows,
// and afterwards one row for every change of an object's row; the header
// again when a changed object adds an optional column, which then stays.
type rowPrinter[T any, P listedObject[T]] struct {
	out      io.Writer
	scope    objectScope
	kind     listedKind[T, P]
	layout   tableLayout
	noHeader bool
	colors   palette

	headerPrinted bool
	lastRows      map[types.NamespacedName]string
}

func newRowPrinter[T any, P listedObject[T]](out io.Writer, opts getListOptions, wide bool, scope objectScope, kind listedKind[T, P]) *rowPrinter[T, P] {
	return &rowPrinter[T, P]{
		out:      out,
		scope:    scope,
		kind:     kind,
		layout:   tableLayout{namespace: opts.allNamespaces, wide: wide, wave: wide},
		noHeader: opts.noHeader,
		colors:   paletteFor(out),
		lastRows: map[types.NamespacedName]string{},
	}
}

// printTable prints the objects that pass the status selector as one table,
// with the optional columns they have something to show in.
func (p *rowPrinter[T, P]) printTable(items []T) error {
	sortObjects[T, P](items)
	printed := p.selected(items)
	p.widen(printed)
	rows := make([][]string, 0, len(printed))
	for _, object := range printed {
		rows = append(rows, p.kind.row(object, p.layout, p.colors))
	}
	var header []string
	if !p.noHeader {
		header = p.kind.header(p.layout)
	}
	return writeTable(p.out, header, rows)
}

// printStructured prints the summaries of the objects that pass the status
// selector as JSON or YAML, in the order of the table.
func (p *rowPrinter[T, P]) printStructured(items []T, format outputFormat) error {
	sortObjects[T, P](items)
	list := summaryList[any]{Items: []any{}}
	for _, object := range p.selected(items) {
		list.Items = append(list.Items, p.kind.summarize(object))
	}
	return writeStructured(p.out, format, list)
}

// printChanged prints the rows that differ from the last ones printed for
// the same objects; the first call prints the header, and so does a call
// whose objects add an optional column.
func (p *rowPrinter[T, P]) printChanged(items []T) error {
	sortObjects[T, P](items)
	var candidates []P
	for _, object := range p.selected(items) {
		if p.scope.matches(object) {
			candidates = append(candidates, object)
		}
	}
	if p.widen(candidates) {
		p.headerPrinted = false
	}
	var rows [][]string
	for _, object := range candidates {
		row := p.kind.row(object, p.layout, p.colors)
		key := client.ObjectKeyFromObject(object)
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
		header = p.kind.header(p.layout)
		p.headerPrinted = true
	}
	return writeTable(p.out, header, rows)
}

// selected are the items that pass the status selector.
func (p *rowPrinter[T, P]) selected(items []T) []P {
	var objects []P
	for i := range items {
		if object := P(&items[i]); p.scope.conditions.matches(object.GetConditions()) {
			objects = append(objects, object)
		}
	}
	return objects
}

// widen adds the optional columns the objects have something to show in,
// and tells whether that added any.
func (p *rowPrinter[T, P]) widen(objects []P) bool {
	if p.kind.widen == nil {
		return false
	}
	before := p.layout
	for _, object := range objects {
		p.layout = p.kind.widen(p.layout, object)
	}
	return p.layout != before
}

// watch lists the objects, prints them, then prints every change until ctx
// ends, which is an error: the watch ran into --timeout. A watch the server
// closes or expires is started again from a new list.
func (p *rowPrinter[T, P]) watch(ctx context.Context, kube client.WithWatch, timeout time.Duration) error {
	changed := func(object P, deleted bool) error {
		if deleted {
			return nil
		}
		return p.printChanged([]T{*object})
	}
	for {
		err := p.kind.follow(ctx, kube, p.scope.listOptions(), p.printChanged, changed)
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
