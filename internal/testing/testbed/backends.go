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
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The behaviour of a backend comes from its pod, as a real app's comes from
// its image and configuration: the version it answers is the image tag, and
// these pod (template) annotations make a revision bad. The backend reads
// them again whenever its pod changes, so that a test changes the
// environment of running pods (a downstream fault, a latency drift) by
// patching their annotations, as the world changes under a running app.
const (
	// ErrorPercentAnnotation makes the pod answer this percentage of its
	// requests (0–100, decimals allowed: "1.5"; spread evenly) with 500.
	ErrorPercentAnnotation = "testbed.serin.dev/error-percent"
	// ErrorPercentOfAnnotation makes pods of some versions only answer a
	// percentage of their requests with 500: "v3=20,v4=100". An
	// environment whose configuration breaks a release that works
	// elsewhere (the production of a wave) carries it in its manifests.
	ErrorPercentOfAnnotation = "testbed.serin.dev/error-percent-of"
	// ErrorPercentOfPathAnnotation makes the pod answer a percentage of
	// the requests for some paths only with 500, spread evenly among each
	// path's requests: "/checkout=7.5,/cart=2". A release that breaks one
	// endpoint of the app carries it.
	ErrorPercentOfPathAnnotation = "testbed.serin.dev/error-percent-of-path"
	// FaultErrorPercentAnnotation makes each request fail (500) with this
	// probability, in percent, at random: the failures a faulty
	// downstream dependency passes on to the app's answers. A test sets it
	// on running pods (every pod of a namespace, primary and canary alike)
	// to make the environment noisy.
	FaultErrorPercentAnnotation = "testbed.serin.dev/fault-error-percent"
	// LatencyAnnotation delays every answer of the pod by this Go duration
	// (e.g. 250ms).
	LatencyAnnotation = "testbed.serin.dev/latency"

	// VersionHeader carries the version (image tag) of the pod that answered.
	VersionHeader = "X-App-Version"
	// PodHeader carries the name of the pod that answered.
	PodHeader = "X-App-Pod"
	// TagHeader is echoed back as the app received it: a test sees the
	// request header a route's filter set on the way to the pod.
	TagHeader = "X-App-Tag"

	// endpointSliceManager is the endpointslice.kubernetes.io/managed-by
	// value of the slices the testbed writes.
	endpointSliceManager = "testbed.serin.dev"
	// drainDelay is how long a deleted pod's backend keeps serving after it
	// left the EndpointSlices: a real pod's termination grace, so that
	// requests the data plane already sent it complete.
	drainDelay = 3 * time.Second
	// JobsPerSecondAnnotation makes the pod a worker that processes this
	// many jobs a second of its own (a queue consumer: nothing calls it),
	// counted in testbed_jobs_total{namespace, pod, outcome="ok"|"error"};
	// the error percentages above fail its jobs as they fail requests.
	JobsPerSecondAnnotation = "testbed.serin.dev/jobs-per-second"
)

// Backends plays the kubelet and the endpoint controller of the kwok node,
// so that every request a test counts goes through real sockets: each pod
// that becomes Ready gets its own loopback address (127.X.Y.Z) with a real
// HTTP server on each of its container ports, and each Service with a
// selector gets an EndpointSlice listing the Ready pods it selects at those
// addresses (addressType FQDN: the API server refuses loopback IPs in IPv4
// slices, but a data plane dials an FQDN that is an IP as it is).
// kube-controller-manager runs without its EndpointSlice controllers.
type Backends struct {
	client client.Client
	log    logr.Logger

	mu      sync.Mutex
	running map[types.UID]*backend
	gone    map[types.UID]bool
	nextIP  uint32
	served  atomic.Uint64

	// durations is the http_request_duration_seconds histogram the apps
	// export, with a status label as podinfo's, and the namespace and pod
	// labels a Prometheus scrape of each pod would add (relabelled from
	// the pod's metadata): one endpoint for every pod of the testbed.
	durations *prometheus.HistogramVec
	// grpcHandled is grpc_server_handled_total, as go-grpc-prometheus
	// names it: the gRPC calls the apps answered, by service, method and
	// gRPC status code, with the namespace and pod labels of durations.
	grpcHandled *prometheus.CounterVec
	// jobs is testbed_jobs_total: the jobs of the worker pods
	// (JobsPerSecondAnnotation), with the labels of durations.
	jobs *prometheus.CounterVec
	// MetricsAddr (host:port) serves the apps' metrics at /metrics, for
	// Prometheus to scrape: what the built-in checks of data plane
	// application read.
	MetricsAddr string
}

// backend is the app of one pod.
type backend struct {
	ip      string
	pod     string
	version string
	// behaviour is what the pod's annotations say, read again whenever
	// the pod changes.
	behaviour atomic.Pointer[behaviour]
	requests  atomic.Uint64
	// pathRequests counts the requests of each path that has its own
	// error percentage (*atomic.Uint64 by path).
	pathRequests sync.Map
	// durations observes each answer, by status code.
	durations prometheus.ObserverVec
	// grpcHandled counts each gRPC answer, by service, method and code.
	grpcHandled *prometheus.CounterVec
	// jobs counts a worker's jobs, by outcome; done stops its loop.
	jobs    *prometheus.CounterVec
	done    chan struct{}
	servers []*http.Server
	// addrs are the host:port the backend listens on.
	addrs []string
}

// Served is the number of requests every backend answered so far.
func (b *Backends) Served() uint64 { return b.served.Load() }

// startBackends runs the two controllers until ctx ends.
func (tb *Testbed) startBackends(ctx context.Context, cfg *rest.Config) (*Backends, error) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	// As kube-controller-manager's endpoint controllers on the testbed: a
	// client-side limit would delay the slices behind a busy test suite.
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 1000, 2000
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 logr.Discard(),
	})
	if err != nil {
		return nil, err
	}
	b := &Backends{
		client:  mgr.GetClient(),
		log:     logr.Discard(),
		running: map[types.UID]*backend{},
		gone:    map[types.UID]bool{},
		// A /16 of the loopback range of its own per testbed, so that two
		// testbeds on one machine do not share addresses.
		nextIP: 127<<24 | (64+rand.Uint32N(190))<<16 | 1<<8,
		durations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "http_request_duration_seconds",
			Help:    "Seconds the app took to answer a request, by HTTP status code.",
			Buckets: prometheus.DefBuckets,
		}, []string{"namespace", "pod", "status"}),
		grpcHandled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_handled_total",
			Help: "gRPC calls the app answered, by service, method and gRPC status code.",
		}, []string{"namespace", "pod", "grpc_type", "grpc_service", "grpc_method", "grpc_code"}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "testbed_jobs_total",
			Help: "Jobs a worker pod processed, by outcome (ok, error).",
		}, []string{"namespace", "pod", "outcome"}),
	}
	if err := b.serveMetrics(ctx); err != nil {
		return nil, err
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Service{}, serviceSelectorIndex, func(o client.Object) []string {
		var pairs []string
		for k, v := range o.(*corev1.Service).Spec.Selector {
			pairs = append(pairs, k+"="+v)
		}
		return pairs
	}); err != nil {
		return nil, err
	}
	opts := controller.Options{MaxConcurrentReconciles: 8, SkipNameValidation: ptr.To(true)}
	if err := ctrl.NewControllerManagedBy(mgr).Named("testbed-kubelet").WithOptions(opts).
		For(&corev1.Pod{}).Complete(reconcile.Func(b.reconcilePod)); err != nil {
		return nil, err
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("testbed-endpointslices").WithOptions(opts).
		For(&corev1.Service{}).
		Owns(&discoveryv1.EndpointSlice{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(b.servicesOfPod)).
		Complete(reconcile.Func(b.reconcileService)); err != nil {
		return nil, err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Println("testbed: backends stopped:", err)
		}
		b.stopAll()
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return nil, errors.New("testbed: the backends' cache did not sync")
	}
	return b, nil
}

// serveMetrics serves the apps' metrics on a loopback port until ctx ends.
func (b *Backends) serveMetrics(ctx context.Context) error {
	registry := prometheus.NewRegistry()
	if err := registry.Register(b.durations); err != nil {
		return err
	}
	if err := registry.Register(b.grpcHandled); err != nil {
		return err
	}
	if err := registry.Register(b.jobs); err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("testbed: apps' metrics: %w", err)
	}
	b.MetricsAddr = l.Addr().String()
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return nil
}

// reconcilePod starts the backend of a pod when it is first Ready, and
// stops it (after the drain delay) once the pod is gone.
func (b *Backends) reconcilePod(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &corev1.Pod{}
	err := b.client.Get(ctx, req.NamespacedName, pod)
	if apierrors.IsNotFound(err) {
		b.releaseByName(req.NamespacedName)
		return reconcile.Result{}, nil
	} else if err != nil {
		return reconcile.Result{}, err
	}
	if pod.DeletionTimestamp != nil {
		b.release(pod.UID)
		return reconcile.Result{}, nil
	}
	if podReady(pod) {
		if _, err := b.ensure(pod); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, b.update(pod)
	}
	return reconcile.Result{}, nil
}

// update reads the behaviour of a pod whose backend runs from its
// annotations again: a test patches running pods to change their
// environment. A pod whose annotations do not parse keeps its behaviour,
// and the error is retried as the pod's reconcile.
func (b *Backends) update(pod *corev1.Pod) error {
	b.mu.Lock()
	be := b.running[pod.UID]
	b.mu.Unlock()
	if be == nil {
		return nil
	}
	bh, err := readBehaviour(pod, be.version)
	if err != nil {
		return err
	}
	be.behaviour.Store(bh)
	return nil
}

// serviceSelectorIndex indexes the Services by each key=value of their
// selectors.
const serviceSelectorIndex = "testbed.serin.dev/selector"

// servicesOfPod maps a pod to the Services of its namespace that select it:
// those whose selector holds one of the pod's labels (an index), then
// every pair checked. Listing the namespace's Services for each pod event
// made the testbed's endpoint controller quadratic: at 500 canaries,
// 1,500 Services copied per pod event, 57 % of the test process's CPU.
func (b *Backends) servicesOfPod(ctx context.Context, obj client.Object) []reconcile.Request {
	labels := obj.GetLabels()
	seen := map[string]bool{}
	var reqs []reconcile.Request
	for k, v := range labels {
		var services corev1.ServiceList // read, never written: not copied
		if err := b.client.List(ctx, &services, client.InNamespace(obj.GetNamespace()),
			client.MatchingFields{serviceSelectorIndex: k + "=" + v}, client.UnsafeDisableDeepCopy); err != nil {
			return nil
		}
		for _, s := range services.Items {
			if !seen[s.Name] && selects(s.Spec.Selector, labels) {
				seen[s.Name] = true
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&s)})
			}
		}
	}
	return reqs
}

func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// reconcileService writes the Service's EndpointSlice: its Ready pods, at
// their backends' addresses.
func (b *Backends) reconcileService(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	svc := &corev1.Service{}
	if err := b.client.Get(ctx, req.NamespacedName, svc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if len(svc.Spec.Selector) == 0 || svc.Spec.Type == corev1.ServiceTypeExternalName || svc.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	var pods corev1.PodList // read, never written: not copied
	if err := b.client.List(ctx, &pods, client.InNamespace(svc.Namespace), client.MatchingLabels(svc.Spec.Selector), client.UnsafeDisableDeepCopy); err != nil {
		return reconcile.Result{}, err
	}
	var endpoints []discoveryv1.Endpoint
	var first *corev1.Pod
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.DeletionTimestamp != nil || !podReady(pod) {
			continue
		}
		ip, err := b.ensure(pod)
		if err != nil {
			return reconcile.Result{}, err
		}
		if ip == "" {
			continue
		}
		if first == nil {
			first = pod
		}
		endpoints = append(endpoints, discoveryv1.Endpoint{
			Addresses:  []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)},
			NodeName:   ptr.To(pod.Spec.NodeName),
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		})
	}
	// Stable order, so that an unchanged set writes nothing.
	sortEndpoints(endpoints)
	ports := slicePorts(svc, first)

	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: svc.Name + "-testbed"}}
	_, err := controllerutil.CreateOrUpdate(ctx, b.client, slice, func() error {
		// The Service's labels, as the endpointslice controller copies
		// them (serin's watch label among them).
		slice.Labels = map[string]string{}
		for k, v := range svc.Labels {
			slice.Labels[k] = v
		}
		slice.Labels[discoveryv1.LabelServiceName] = svc.Name
		slice.Labels[discoveryv1.LabelManagedBy] = endpointSliceManager
		slice.AddressType = discoveryv1.AddressTypeFQDN
		if !equality.Semantic.DeepEqual(slice.Endpoints, endpoints) {
			slice.Endpoints = endpoints
		}
		if !equality.Semantic.DeepEqual(slice.Ports, ports) {
			slice.Ports = ports
		}
		return controllerutil.SetControllerReference(svc, slice, b.client.Scheme())
	})
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		return reconcile.Result{RequeueAfter: 10 * time.Millisecond}, nil
	}
	return reconcile.Result{}, err
}

func sortEndpoints(eps []discoveryv1.Endpoint) {
	for i := 1; i < len(eps); i++ {
		for j := i; j > 0 && eps[j].TargetRef.Name < eps[j-1].TargetRef.Name; j-- {
			eps[j], eps[j-1] = eps[j-1], eps[j]
		}
	}
}

// slicePorts resolves the Service's target ports against a selected pod's
// container ports, as the endpoint controller does.
func slicePorts(svc *corev1.Service, pod *corev1.Pod) []discoveryv1.EndpointPort {
	var ports []discoveryv1.EndpointPort
	for _, sp := range svc.Spec.Ports {
		port, ok := targetPort(sp.TargetPort, sp.Port, pod)
		if !ok {
			continue
		}
		ports = append(ports, discoveryv1.EndpointPort{
			Name: ptr.To(sp.Name), Protocol: ptr.To(sp.Protocol), Port: ptr.To(port), AppProtocol: sp.AppProtocol,
		})
	}
	return ports
}

func targetPort(tp intstr.IntOrString, servicePort int32, pod *corev1.Pod) (int32, bool) {
	switch {
	case tp.Type == intstr.Int && tp.IntVal != 0:
		return tp.IntVal, true
	case tp.Type == intstr.String && tp.StrVal != "":
		if pod == nil {
			return 0, false
		}
		for _, c := range pod.Spec.Containers {
			for _, p := range c.Ports {
				if p.Name == tp.StrVal {
					return p.ContainerPort, true
				}
			}
		}
		return 0, false
	}
	return servicePort, true
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ensure starts the pod's backend unless it runs already, and returns its
// address; "" for a pod that is already gone.
func (b *Backends) ensure(pod *corev1.Pod) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if be, ok := b.running[pod.UID]; ok {
		return be.ip, nil
	}
	if b.gone[pod.UID] {
		return "", nil
	}
	be, err := newBackend(pod)
	if err != nil {
		return "", err
	}
	be.durations = b.durations.MustCurryWith(prometheus.Labels{"namespace": pod.Namespace, "pod": pod.Name})
	be.grpcHandled = b.grpcHandled.MustCurryWith(prometheus.Labels{"namespace": pod.Namespace, "pod": pod.Name})
	be.jobs = b.jobs.MustCurryWith(prometheus.Labels{"namespace": pod.Namespace, "pod": pod.Name})
	ports := containerPorts(pod)
	for attempt := 0; ; attempt++ {
		ip := net.IPv4(byte(b.nextIP>>24), byte(b.nextIP>>16), byte(b.nextIP>>8), byte(b.nextIP)).String()
		b.nextIP++
		if byte(b.nextIP) == 0 {
			b.nextIP++ // skip .0
		}
		err := be.listen(ip, ports, &b.served)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EADDRINUSE) || attempt > 100 {
			return "", fmt.Errorf("testbed: backend of pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	b.running[pod.UID] = be
	be.work()
	return be.ip, nil
}

func containerPorts(pod *corev1.Pod) []int32 {
	var ports []int32
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Protocol == "" || p.Protocol == corev1.ProtocolTCP {
				ports = append(ports, p.ContainerPort)
			}
		}
	}
	if len(ports) == 0 {
		ports = []int32{80}
	}
	return ports
}

// releaseByName releases the backend of a pod that is no longer in the
// cache, found by name.
func (b *Backends) releaseByName(key types.NamespacedName) {
	b.mu.Lock()
	var uid types.UID
	for u, be := range b.running {
		if be.pod == key.String() {
			uid = u
		}
	}
	b.mu.Unlock()
	if uid != "" {
		b.release(uid)
	}
}

// release stops a pod's backend after the drain delay; the pod's
// EndpointSlices no longer list it (it is deleted or being deleted).
func (b *Backends) release(uid types.UID) {
	b.mu.Lock()
	be := b.running[uid]
	delete(b.running, uid)
	b.gone[uid] = true
	b.mu.Unlock()
	if be != nil {
		time.AfterFunc(drainDelay, func() {
			be.stop()
			// A pod that is gone is no longer scraped: its series end.
			namespace, name, _ := strings.Cut(be.pod, "/")
			b.durations.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "pod": name})
			b.grpcHandled.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "pod": name})
			b.jobs.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "pod": name})
		})
	}
}

func (b *Backends) stopAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for uid, be := range b.running {
		be.stop()
		delete(b.running, uid)
	}
}

// newBackend reads the app's behaviour from its pod.
func newBackend(pod *corev1.Pod) (*backend, error) {
	be := &backend{pod: pod.Namespace + "/" + pod.Name, version: "unknown"}
	if len(pod.Spec.Containers) > 0 {
		be.version = imageTag(pod.Spec.Containers[0].Image)
	}
	bh, err := readBehaviour(pod, be.version)
	if err != nil {
		return nil, err
	}
	be.behaviour.Store(bh)
	return be, nil
}

// behaviour is what a pod's annotations make its app do.
type behaviour struct {
	// errorPercent of the requests fail, spread evenly (see failsEvenly).
	errorPercent float64
	// pathErrorPercent of the requests of each path fail, spread evenly
	// among that path's requests.
	pathErrorPercent map[string]float64
	// faultPercent of the requests fail at random.
	faultPercent float64
	latency      time.Duration
	// jobsPerSecond a worker processes; 0 for an app that only serves.
	jobsPerSecond float64
}

// readBehaviour reads the behaviour of a pod running version from its
// annotations.
func readBehaviour(pod *corev1.Pod, version string) (*behaviour, error) {
	name := pod.Namespace + "/" + pod.Name
	bh := &behaviour{}
	var err error
	if v := pod.Annotations[ErrorPercentAnnotation]; v != "" {
		if bh.errorPercent, err = parsePercent(v); err != nil {
			return nil, fmt.Errorf("testbed: pod %s: %s=%q is not a percentage", name, ErrorPercentAnnotation, v)
		}
	}
	if v := pod.Annotations[ErrorPercentOfAnnotation]; v != "" {
		byVersion, err := parsePercentMap(v)
		if err != nil {
			return nil, fmt.Errorf("testbed: pod %s: %s=%q: want version=percent[,version=percent]", name, ErrorPercentOfAnnotation, v)
		}
		if n, ok := byVersion[version]; ok {
			bh.errorPercent = n
		}
	}
	if v := pod.Annotations[ErrorPercentOfPathAnnotation]; v != "" {
		if bh.pathErrorPercent, err = parsePercentMap(v); err != nil {
			return nil, fmt.Errorf("testbed: pod %s: %s=%q: want /path=percent[,/path=percent]", name, ErrorPercentOfPathAnnotation, v)
		}
	}
	if v := pod.Annotations[FaultErrorPercentAnnotation]; v != "" {
		if bh.faultPercent, err = parsePercent(v); err != nil {
			return nil, fmt.Errorf("testbed: pod %s: %s=%q is not a percentage", name, FaultErrorPercentAnnotation, v)
		}
	}
	if v := pod.Annotations[JobsPerSecondAnnotation]; v != "" {
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || n < 0 || n > 1000 {
			return nil, fmt.Errorf("testbed: pod %s: %s=%q is not a number of jobs from 0 to 1000", name, JobsPerSecondAnnotation, v)
		}
		bh.jobsPerSecond = n
	}
	if v := pod.Annotations[LatencyAnnotation]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("testbed: pod %s: %s=%q is not a duration", name, LatencyAnnotation, v)
		}
		bh.latency = d
	}
	return bh, nil
}

// parsePercent parses a percentage, 0 to 100, decimals allowed.
func parsePercent(v string) (float64, error) {
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || n < 0 || n > 100 {
		return 0, fmt.Errorf("%q is not a percentage", v)
	}
	return n, nil
}

// parsePercentMap parses "key=percent[,key=percent]".
func parsePercentMap(v string) (map[string]float64, error) {
	m := map[string]float64{}
	for _, entry := range strings.Split(v, ",") {
		key, percent, ok := strings.Cut(strings.TrimSpace(entry), "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("%q is not key=percent", entry)
		}
		n, err := parsePercent(percent)
		if err != nil {
			return nil, err
		}
		m[key] = n
	}
	return m, nil
}

// failsEvenly says whether the n-th request (from 0) of a series fails
// when percent of them fail, spread evenly: when n*percent/100 steps up,
// counted in hundredths of a percent.
func failsEvenly(n uint64, percent float64) bool {
	hundredths := uint64(math.Round(percent * 100))
	return (n+1)*hundredths/10000 != n*hundredths/10000
}

// fails says whether the backend answers a request for path with 500,
// counting the request.
func (be *backend) fails(bh *behaviour, path string) bool {
	n := be.requests.Add(1) - 1
	failed := failsEvenly(n, bh.errorPercent)
	if percent, ok := bh.pathErrorPercent[path]; ok {
		counter, _ := be.pathRequests.LoadOrStore(path, new(atomic.Uint64))
		failed = failsEvenly(counter.(*atomic.Uint64).Add(1)-1, percent) || failed
	}
	if bh.faultPercent > 0 && rand.Float64()*100 < bh.faultPercent {
		failed = true
	}
	return failed
}

// imageTag returns the tag of an image reference ("latest" without one).
func imageTag(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, ":"); i >= 0 && !strings.Contains(image[i:], "/") {
		return image[i+1:]
	}
	return "latest"
}

// listen serves the app on ip at every port; all or none.
func (be *backend) listen(ip string, ports []int32, served *atomic.Uint64) error {
	var listeners []net.Listener
	for _, p := range ports {
		l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(int(p))))
		if err != nil {
			for _, l := range listeners {
				l.Close()
			}
			return err
		}
		listeners = append(listeners, l)
		be.addrs = append(be.addrs, l.Addr().String())
	}
	be.ip = ip
	grpcServer := be.grpcServer(served)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			grpcServer.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		bh := be.behaviour.Load()
		failed := be.fails(bh, r.URL.Path)
		served.Add(1)
		if bh.latency > 0 {
			select {
			case <-time.After(bh.latency):
			case <-r.Context().Done():
				return
			}
		}
		status := http.StatusOK
		if failed {
			status = http.StatusInternalServerError
		}
		if be.durations != nil {
			defer func() { be.durations.WithLabelValues(strconv.Itoa(status)).Observe(time.Since(start).Seconds()) }()
		}
		w.Header().Set(VersionHeader, be.version)
		w.Header().Set(PodHeader, be.pod)
		if tag := r.Header.Get(TagHeader); tag != "" {
			w.Header().Set(TagHeader, tag)
		}
		w.Header().Set("Content-Type", "application/json")
		if status != http.StatusOK {
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"version":%q,"pod":%q,"error":"injected by %s"}`+"\n", be.version, be.pod, ErrorPercentAnnotation)
			return
		}
		fmt.Fprintf(w, `{"version":%q,"pod":%q}`+"\n", be.version, be.pod)
	})
	for _, l := range listeners {
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second, Protocols: &http.Protocols{}}
		// HTTP/1.1, and HTTP/2 without TLS (h2c, prior knowledge): what a
		// data plane speaks to the backends of a GRPCRoute.
		srv.Protocols.SetHTTP1(true)
		srv.Protocols.SetUnencryptedHTTP2(true)
		be.servers = append(be.servers, srv)
		go func() { _ = srv.Serve(l) }()
	}
	return nil
}

// work runs a worker's jobs until the backend stops, at the rate its
// pod's annotations ask for (read again at each job, as its other
// behaviour is), each failing as a request would.
func (be *backend) work() {
	be.done = make(chan struct{})
	go func() {
		for {
			bh := be.behaviour.Load()
			wait := time.Second
			if bh.jobsPerSecond > 0 {
				wait = time.Duration(float64(time.Second) / bh.jobsPerSecond)
			}
			select {
			case <-be.done:
				return
			case <-time.After(wait):
			}
			if bh.jobsPerSecond == 0 || be.jobs == nil {
				continue
			}
			outcome := "ok"
			if be.fails(bh, "") {
				outcome = "error"
			}
			be.jobs.WithLabelValues(outcome).Inc()
		}
	}()
}

func (be *backend) stop() {
	if be.done != nil {
		close(be.done)
	}
	for _, s := range be.servers {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = s.Shutdown(ctx)
		cancel()
	}
}
