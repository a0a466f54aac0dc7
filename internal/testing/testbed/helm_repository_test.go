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

package testbed

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"testing"

	"sigs.k8s.io/yaml"
)

// The repository serves what a Helm client reads: an index listing each
// version with its URL and digest, and packages whose entries are under the
// chart's name, with Chart.yaml at the version asked for.
func TestHelmRepository(t *testing.T) {
	repo, err := StartHelmRepository(PodinfoChart("0.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	if err := repo.Publish(PodinfoChart("0.2.0")); err != nil {
		t.Fatal(err)
	}
	get := func(url string) []byte {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
		}
		return body
	}
	var index struct {
		APIVersion string                  `json:"apiVersion"`
		Entries    map[string][]indexEntry `json:"entries"`
	}
	if err := yaml.Unmarshal(get(repo.URL+"/index.yaml"), &index); err != nil {
		t.Fatal(err)
	}
	versions := index.Entries["podinfo"]
	if index.APIVersion != "v1" || len(versions) != 2 || versions[1].Version != "0.2.0" {
		t.Fatalf("index = %+v", index)
	}
	tgz := get(versions[1].URLs[0])
	if sum := sha256.Sum256(tgz); hex.EncodeToString(sum[:]) != versions[1].Digest {
		t.Errorf("digest of %s differs from the index's", versions[1].URLs[0])
	}
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		files[hdr.Name] = string(b)
	}
	for _, name := range []string{"podinfo/Chart.yaml", "podinfo/values.yaml", "podinfo/templates/deployment.yaml", "podinfo/templates/service.yaml"} {
		if _, ok := files[name]; !ok {
			t.Errorf("package lacks %s: %v", name, files)
		}
	}
	if !bytes.Contains([]byte(files["podinfo/Chart.yaml"]), []byte("version: 0.2.0")) {
		t.Errorf("Chart.yaml = %q", files["podinfo/Chart.yaml"])
	}
	if n := repo.Downloads("podinfo", "0.2.0"); n != 1 {
		t.Errorf("downloads = %d, want 1", n)
	}
}
