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

import "errors"

// The exit statuses of serin. Every command but wait ends with ExitOK or
// ExitFailed, as flux's do; `serin wait` tells its outcomes apart, so that
// a CI job can act on each (docs/cli.md, "Scripting and CI").
const (
	// ExitOK: the command did what it was asked; for wait, the rollout
	// succeeded.
	ExitOK = 0
	// ExitFailed: the command failed; for wait, the rollout failed or
	// halted, or the Canary or group stalled.
	ExitFailed = 1
	// ExitCannotWait (wait only): the command could not wait for a
	// verdict: a usage error, no such Canary or group, a suspended one, or
	// the API server refused or could not be reached.
	ExitCannotWait = 2
	// ExitTimeout (wait only): --timeout ran out before the verdict.
	ExitTimeout = 3
)

// exitError is an error that ends the command with another status than
// ExitFailed.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// withExitCode makes err end the command with code; nil stays nil, and an
// error that has a code keeps it.
func withExitCode(code int, err error) error {
	var coded *exitError
	if err == nil || errors.As(err, &coded) {
		return err
	}
	return &exitError{code: code, err: err}
}

// ExitCode is the status the command should exit with after returning
// err: ExitOK for nil, the code the error carries, else ExitFailed.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var coded *exitError
	if errors.As(err, &coded) {
		return coded.code
	}
	return ExitFailed
}
