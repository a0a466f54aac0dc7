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
	"fmt"
	"io"
)

// statusLog prints progress lines with flux's symbols, on standard error so
// that standard output stays for data.
type statusLog struct{ w io.Writer }

// actionf announces what the command does: "► annotating Canary …".
func (l statusLog) actionf(format string, args ...any) { l.printf("►", format, args...) }

// waitingf announces a wait: "◎ waiting for …".
func (l statusLog) waitingf(format string, args ...any) { l.printf("◎", format, args...) }

// successf reports a result: "✔ Canary annotated".
func (l statusLog) successf(format string, args ...any) { l.printf("✔", format, args...) }

// warningf reports something the user should know: "⚠️ …".
func (l statusLog) warningf(format string, args ...any) { l.printf("⚠️", format, args...) }

// failuref reports what went wrong without failing the command, as flux
// does of an empty list: "✗ no Canary objects found …".
func (l statusLog) failuref(format string, args ...any) { l.printf("✗", format, args...) }

// notef says something done differently, but not lost.
func (l statusLog) notef(format string, args ...any) { l.printf("ℹ", format, args...) }

func (l statusLog) printf(symbol, format string, args ...any) {
	fmt.Fprintln(l.w, symbol, fmt.Sprintf(format, args...))
}
