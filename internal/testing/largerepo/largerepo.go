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

// Package largerepo writes the large fleet repositories of the GitOps
// benchmarks: a bare repository whose main branch has thousands of commits
// over thousands of files, generated with git fast-import in a second or
// two (the git CLI must be on the PATH).
package largerepo

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Spec describes a repository. Commit 1 adds Base and Files ConfigMaps
// under teams/; each following commit changes one of those ConfigMaps, as
// the other teams of a busy fleet do, unless Changes says otherwise.
type Spec struct {
	// Commits is the length of main, at least 1.
	Commits int
	// Files is how many ConfigMaps commit 1 adds under teams/.
	Files int
	// Base are the other files of commit 1, by slash-separated path.
	Base map[string][]byte
	// Changes are the commits (numbered from 1; not 1) that write their
	// files instead of changing a ConfigMap.
	Changes map[int]Change
	// Epoch is the time of commit 1; each next one comes a minute later.
	Epoch time.Time
}

// Change is a commit of a Spec that writes files of its own.
type Change struct {
	Message string
	Files   map[string][]byte
}

// Generate writes the repository as a bare repository at dir and returns
// the hashes of its commits: hashes[i] is commit i+1, hashes[len-1] the
// head of main.
func Generate(dir string, s Spec) (hashes []string, err error) {
	if s.Commits < 1 {
		return nil, fmt.Errorf("a repository of %d commits", s.Commits)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := git(dir, nil, "init", "--quiet", "--bare", "--initial-branch=main"); err != nil {
		return nil, err
	}
	marks := filepath.Join(dir, "serin-marks")
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 1<<20)
		err := Write(w, s)
		if err == nil {
			err = w.Flush()
		}
		pw.CloseWithError(err)
	}()
	if err := git(dir, pr, "fast-import", "--quiet", "--export-marks="+marks); err != nil {
		pr.CloseWithError(err) // the writer stops
		return nil, err
	}
	return readMarks(marks, s.Commits)
}

// git runs the git CLI in dir.
func git(dir string, stdin io.Reader, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Stdin = dir, stdin
	// glibc otherwise trims and grows fast-import's heap at every object:
	// 15 s of brk instead of 1 s.
	cmd.Env = append(os.Environ(), "MALLOC_TOP_PAD_=268435456", "MALLOC_TRIM_THRESHOLD_=268435456")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %w: %s", args[0], err, out)
	}
	return nil
}

// readMarks reads the commit hashes fast-import exported (":MARK HASH").
func readMarks(path string, commits int) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	hashes := make([]string, commits)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var mark int
		var hash string
		if _, err := fmt.Sscanf(line, ":%d %s", &mark, &hash); err != nil || mark < 1 || mark > commits {
			return nil, fmt.Errorf("fast-import mark %q", line)
		}
		hashes[mark-1] = hash
	}
	return hashes, os.Remove(path)
}

// Write writes the git fast-import stream of s: main's commits, marked
// :1 to :Commits.
func Write(w io.Writer, s Spec) error {
	bw := bufio.NewWriter(w)
	file := func(path string, content []byte) {
		fmt.Fprintf(bw, "M 100644 inline %s\ndata %d\n", path, len(content))
		bw.Write(content)
		bw.WriteString("\n")
	}
	for i := 1; i <= s.Commits; i++ {
		change, special := s.Changes[i]
		message := fmt.Sprintf("Change settings %d", i)
		switch {
		case i == 1:
			message = "Add the fleet"
		case special:
			message = change.Message
		}
		when := s.Epoch.Add(time.Duration(i) * time.Minute).Unix()
		fmt.Fprintf(bw, "commit refs/heads/main\nmark :%d\ncommitter Dev <dev@example.com> %d +0000\ndata %d\n%s\n", i, when, len(message), message)
		if i > 1 {
			fmt.Fprintf(bw, "from :%d\n", i-1)
		}
		switch {
		case i == 1:
			for _, p := range sortedPaths(s.Base) {
				file(p, s.Base[p])
			}
			for n := 0; n < s.Files; n++ {
				file(configMapPath(n), configMap(n, 0))
			}
		case special:
			for _, p := range sortedPaths(change.Files) {
				file(p, change.Files[p])
			}
		case s.Files > 0:
			n := (i * 7919) % s.Files
			file(configMapPath(n), configMap(n, i))
		}
		bw.WriteString("\n")
	}
	return bw.Flush()
}

func configMapPath(n int) string {
	return fmt.Sprintf("teams/team-%02d/settings-%04d.yaml", n%50, n)
}

// configMap is ConfigMap n as commit revision writes it.
func configMap(n, revision int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings-%04d\n  namespace: team-%02d\n"+
		"data:\n  revision: \"%d\"\n  owner: team-%02d@example.com\n  description: |\n"+
		"    Settings of service %04d, generated for serin's large repository benchmark.\n"+
		"    They change once in a while, as settings of a real fleet do.\n",
		n, n%50, revision, n%50, n)
	return b.Bytes()
}

func sortedPaths(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
