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
	"io"
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/text/width"
)

// writeTable prints a table laid out exactly like `flux get`. Flux prints
// with olekukonko/tablewriter v0.0.5 set up without borders or header line,
// upper-case left-aligned headers, no wrapping, "no white space" mode and a
// tab as padding. That comes down to these rules, which this function
// implements:
//   - a column is as wide as its widest cell, header included, and every
//     cell is padded with spaces to that width;
//   - every header cell is followed by a tab, except the last one, which is
//     followed by a space;
//   - every row cell, the last one included, is followed by a tab;
//   - a cell holding several lines spreads its row over as many lines, and
//     the missing lines of the other cells are two spaces, padded;
//   - an empty header prints no header line;
//   - colour escape sequences do not count towards a cell's width.
//
// Headers are given in the case they are printed in: serin's headers have no
// '_' or '.', which tablewriter would turn into spaces.
func writeTable(w io.Writer, header []string, rows [][]string) error {
	widths := columnWidths(header, rows)
	var b strings.Builder
	if len(header) > 0 {
		writeTableHeader(&b, header, widths)
	}
	for _, row := range rows {
		writeTableRow(&b, row, widths)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func columnWidths(header []string, rows [][]string) []int {
	var widths []int
	grow := func(column int, cell string) {
		for len(widths) <= column {
			widths = append(widths, 0)
		}
		for _, line := range strings.Split(cell, "\n") {
			widths[column] = max(widths[column], displayWidth(line))
		}
	}
	for column, cell := range header {
		grow(column, cell)
	}
	for _, row := range rows {
		for column, cell := range row {
			grow(column, cell)
		}
	}
	return widths
}

func writeTableHeader(b *strings.Builder, header []string, widths []int) {
	cells, height := splitCellLines(header)
	last := len(widths) - 1
	for line := 0; line < height; line++ {
		for column := 0; column <= last; column++ {
			text := ""
			if column < len(cells) && line < len(cells[column]) {
				text = cells[column][line]
			}
			b.WriteString(padRight(strings.ToUpper(text), widths[column]))
			if column == last {
				b.WriteString(" ")
			} else {
				b.WriteString("\t")
			}
		}
		b.WriteString("\n")
	}
}

func writeTableRow(b *strings.Builder, row []string, widths []int) {
	cells, height := splitCellLines(row)
	for line := 0; line < height; line++ {
		for column := range cells {
			text := "  "
			if line < len(cells[column]) {
				text = cells[column][line]
			}
			b.WriteString(padRight(text, widths[column]))
			b.WriteString("\t")
		}
		b.WriteString("\n")
	}
}

func splitCellLines(cells []string) (lines [][]string, height int) {
	lines = make([][]string, len(cells))
	for i, cell := range cells {
		lines[i] = strings.Split(cell, "\n")
		height = max(height, len(lines[i]))
	}
	return lines, height
}

func padRight(s string, width int) string {
	if gap := width - displayWidth(s); gap > 0 {
		return s + strings.Repeat(" ", gap)
	}
	return s
}

// ansiEscape matches the colour sequences tablewriter leaves out of a cell's
// width.
var ansiEscape = regexp.MustCompile("\033\\[(?:[0-9]{1,3}(?:;[0-9]{1,3})*)?[mK]")

// displayWidth is the number of terminal columns s takes: East Asian wide
// runes take two, combining marks none.
func displayWidth(s string) int {
	n := 0
	for _, r := range ansiEscape.ReplaceAllString(s, "") {
		switch {
		case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		case width.LookupRune(r).Kind() == width.EastAsianWide,
			width.LookupRune(r).Kind() == width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}

// hexRun matches a hexadecimal run of 40 to 128 characters (SHA-1 up to
// SHA-512), the way flux's TruncateHex does.
var hexRun = regexp.MustCompile(`\b[a-f0-9]{40,128}\b`)

// shortenHashes cuts every long hexadecimal run in s to its first 8
// characters, so main@sha1:0123abcd… prints as main@sha1:0123abcd.
func shortenHashes(s string) string {
	return hexRun.ReplaceAllStringFunc(s, func(hash string) string { return hash[:8] })
}
