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
	"os"

	"golang.org/x/term"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/serin-dev/serin/api/v1alpha1"
)

const (
	ansiRed    = "31"
	ansiGreen  = "32"
	ansiYellow = "33"
)

// palette colours statuses, or leaves them alone when disabled.
type palette struct{ enabled bool }

// paletteFor enables colours only when w is a terminal and NO_COLOR is unset.
func paletteFor(w io.Writer) palette {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" {
		return palette{}
	}
	return palette{enabled: term.IsTerminal(int(f.Fd()))}
}

func (p palette) paint(code, s string) string {
	if !p.enabled || s == "" {
		return s
	}
	return "\033[" + code + "m" + s + "\033[0m"
}

// conditionStatus colours True green, False red and Unknown yellow.
func (p palette) conditionStatus(status string) string {
	switch metav1.ConditionStatus(status) {
	case metav1.ConditionTrue:
		return p.paint(ansiGreen, status)
	case metav1.ConditionFalse:
		return p.paint(ansiRed, status)
	default:
		return p.paint(ansiYellow, status)
	}
}

// phase colours the resting phases green, the failed ones red and the
// phases of a rollout in progress yellow.
func (p palette) phase(phase v1alpha1.CanaryPhase) string {
	switch phase {
	case v1alpha1.PhaseInitialized, v1alpha1.PhaseSucceeded:
		return p.paint(ansiGreen, string(phase))
	case v1alpha1.PhaseFailed, v1alpha1.PhaseHalted:
		return p.paint(ansiRed, string(phase))
	default:
		return p.paint(ansiYellow, string(phase))
	}
}

// wavePhase colours the phase of a stage of a wave like phase does: the
// stage's rollout succeeded (or it already ran the images) green, what
// stopped the wave red, and a promotion under way yellow.
func (p palette) wavePhase(phase string) string {
	switch phase {
	case v1alpha1.WaveSucceeded, v1alpha1.WaveUpToDate:
		return p.paint(ansiGreen, phase)
	case v1alpha1.WaveFailed, v1alpha1.WaveStopped, v1alpha1.WaveError:
		return p.paint(ansiRed, phase)
	default:
		return p.paint(ansiYellow, phase)
	}
}
