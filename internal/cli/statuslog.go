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

func (l statusLog) printf(symbol, format string, args ...any) {
	fmt.Fprintln(l.w, symbol, fmt.Sprintf(format, args...))
}
