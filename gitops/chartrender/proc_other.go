//go:build !linux

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

package chartrender

import (
	"errors"
	"os"
	"os/exec"
	"time"
)

// exitCPU is the child's exit code when it passed its CPU bound.
const exitCPU = 3

// errUnbounded: a child cannot bound itself here, so it renders nothing.
var errUnbounded = errors.New("charts are rendered only on Linux, where the renderer can bound its memory and CPU time")

func isolate(*exec.Cmd) {}

func killed(*os.ProcessState) bool { return false }

func cpuKilled(*os.ProcessState, time.Duration) bool { return false }

func isPipeError(err error) bool { return errors.Is(err, os.ErrClosed) }

// bindSelf refuses: without rlimits, a chart is not rendered.
func bindSelf(int64, uint64) error { return errUnbounded }
