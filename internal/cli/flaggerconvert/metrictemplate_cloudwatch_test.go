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

package flaggerconvert

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/internal/testing/testbed"
)

// A Flagger cloudwatch MetricTemplate converts with its region and query.
// Flagger signed with its own pod's AWS identity, so a template without a
// secretRef is reported: serin needs one. Flagger's cloudwatch provider
// ignores address, so it is left out, said so.
func TestConvertCloudWatchMetricTemplate(t *testing.T) {
	const query = `[{\"Id\": \"e1\", \"Expression\": \"m1 / m2\"}]`
	secret := &meta.LocalObjectReference{Name: "aws"}
	tests := map[string]struct {
		provider    string
		wantDropped []string
		wantSpec    v1alpha1.MetricTemplateSpec
	}{
		"Flagger's example: no Secret": {
			provider:    "{type: cloudwatch, region: ap-northeast-1}",
			wantDropped: []string{"spec.provider.secretRef"},
			wantSpec: v1alpha1.MetricTemplateSpec{Provider: v1alpha1.MetricProvider{Type: v1alpha1.CloudWatchProvider,
				Region: "ap-northeast-1"}, Query: `[{"Id": "e1", "Expression": "m1 / m2"}]`},
		},
		"with a Secret": {
			provider: "{type: cloudwatch, region: eu-west-1, secretRef: {name: aws}}",
			wantSpec: v1alpha1.MetricTemplateSpec{Provider: v1alpha1.MetricProvider{Type: v1alpha1.CloudWatchProvider,
				Region: "eu-west-1", SecretRef: secret}, Query: `[{"Id": "e1", "Expression": "m1 / m2"}]`},
		},
		"an address Flagger ignored": {
			provider:    "{type: cloudwatch, region: eu-west-1, address: 'http://prometheus:9090', secretRef: {name: aws}}",
			wantDropped: []string{"spec.provider.address"},
			wantSpec: v1alpha1.MetricTemplateSpec{Provider: v1alpha1.MetricProvider{Type: v1alpha1.CloudWatchProvider,
				Region: "eu-west-1", SecretRef: secret}, Query: `[{"Id": "e1", "Expression": "m1 / m2"}]`},
		},
		"no region": {
			provider:    "{type: cloudwatch, secretRef: {name: aws}}",
			wantDropped: []string{"spec.provider.region"},
			wantSpec: v1alpha1.MetricTemplateSpec{Provider: v1alpha1.MetricProvider{Type: v1alpha1.CloudWatchProvider,
				SecretRef: secret}, Query: `[{"Id": "e1", "Expression": "m1 / m2"}]`},
		},
		"a region on another type": {
			provider:    "{type: prometheus, address: 'http://prometheus:9090', region: eu-west-1}",
			wantDropped: []string{"spec.provider.region"},
			wantSpec: v1alpha1.MetricTemplateSpec{Provider: v1alpha1.MetricProvider{Type: v1alpha1.PrometheusProvider,
				Address: "http://prometheus:9090"}, Query: `[{"Id": "e1", "Expression": "m1 / m2"}]`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkConvertedMetricTemplate(t, tc.provider, query, tc.wantDropped, tc.wantSpec)
		})
	}
	result, _ := Convert([]byte(metricTemplateYAML("{type: cloudwatch, region: ap-northeast-1}", query)))
	if reason := result.Dropped[0].Reason; !strings.Contains(reason, "aws_access_key_id and aws_secret_access_key") {
		t.Errorf("the report says %q, not which keys the Secret needs", reason)
	}
}

// The API server accepts a converted cloudwatch MetricTemplate once it
// has its Secret, and refuses one without a region, without a Secret, or
// a region on another type, with CEL's messages. It needs the envtest
// binaries ($KUBEBUILDER_ASSETS).
func TestCloudWatchMetricTemplateAdmission(t *testing.T) {
	if testing.Short() || os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("needs a kube-apiserver: set KUBEBUILDER_ASSETS to the output of hack/testbed/assets.sh")
	}
	tb, err := testbed.Start(context.Background(), testbed.Options{CRDDirs: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tb.Stop() })
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	kube, err := client.New(tb.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}}); err != nil {
		t.Fatal(err)
	}

	result, err := Convert([]byte(metricTemplateYAML("{type: cloudwatch, region: ap-northeast-1}", `[{\"Id\": \"e1\", \"Expression\": \"m1 / m2\"}]`)))
	if err != nil {
		t.Fatal(err)
	}
	converted := result.Manifests[0].Object.(metricTemplateManifest).Spec
	converted.Provider.SecretRef = &meta.LocalObjectReference{Name: "aws"}

	secret := &meta.LocalObjectReference{Name: "aws"}
	tests := map[string]struct {
		spec    v1alpha1.MetricTemplateSpec
		wantErr string
	}{
		"converted with its Secret": {spec: converted},
		"an address of its own": {spec: v1alpha1.MetricTemplateSpec{Query: "[]", Provider: v1alpha1.MetricProvider{
			Type: v1alpha1.CloudWatchProvider, Region: "us-east-1", Address: "https://vpce-0123.monitoring.us-east-1.vpce.amazonaws.com", SecretRef: secret}}},
		"no region": {spec: v1alpha1.MetricTemplateSpec{Query: "[]", Provider: v1alpha1.MetricProvider{
			Type: v1alpha1.CloudWatchProvider, SecretRef: secret}},
			wantErr: "provider.region is required for cloudwatch: the AWS region of the metrics, such as us-east-1"},
		"no Secret": {spec: v1alpha1.MetricTemplateSpec{Query: "[]", Provider: v1alpha1.MetricProvider{
			Type: v1alpha1.CloudWatchProvider, Region: "us-east-1"}},
			wantErr: "provider.secretRef is required for cloudwatch: it holds the AWS access key"},
		"a region on prometheus": {spec: v1alpha1.MetricTemplateSpec{Query: "up", Provider: v1alpha1.MetricProvider{
			Address: "http://prometheus:9090", Region: "us-east-1"}},
			wantErr: "provider.region is used by cloudwatch only"},
		"a region that is not one": {spec: v1alpha1.MetricTemplateSpec{Query: "[]", Provider: v1alpha1.MetricProvider{
			Type: v1alpha1.CloudWatchProvider, Region: "us-east-1.evil.example/", SecretRef: secret}},
			wantErr: "spec.provider.region: Invalid value"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := kube.Create(ctx, &v1alpha1.MetricTemplate{
				ObjectMeta: metav1.ObjectMeta{Name: strings.ReplaceAll(strings.ToLower(name), " ", "-"), Namespace: "apps"},
				Spec:       tc.spec,
			})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
