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

// Command serin-agent is serin's controller manager: it reconciles Canary
// objects next to Flux's controllers.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	notificationv1 "github.com/fluxcd/notification-controller/api/v1beta3"
	"github.com/fluxcd/pkg/runtime/acl"
	"github.com/fluxcd/pkg/runtime/client"
	helper "github.com/fluxcd/pkg/runtime/controller"
	feathelper "github.com/fluxcd/pkg/runtime/features"
	"github.com/fluxcd/pkg/runtime/leaderelection"
	"github.com/fluxcd/pkg/runtime/logger"
	"github.com/fluxcd/pkg/runtime/metrics"
	"github.com/fluxcd/pkg/runtime/pprof"
	"github.com/fluxcd/pkg/runtime/probes"
	flag "github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	ctrlcfg "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/serin-dev/serin/analysis"
	"github.com/serin-dev/serin/api/v1alpha1"
	"github.com/serin-dev/serin/controllers"
	"github.com/serin-dev/serin/dataplane"
	"github.com/serin-dev/serin/gitops"
	"github.com/serin-dev/serin/gitops/chartrender"
	"github.com/serin-dev/serin/internal/features"
	"github.com/serin-dev/serin/internal/tenancy"
	"github.com/serin-dev/serin/internal/version"
	"github.com/serin-dev/serin/internal/workload"
	"github.com/serin-dev/serin/notifier"
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	utilruntime.Must(gatewayv1.Install(scheme))
	utilruntime.Must(notificationv1.AddToScheme(scheme))
}

func main() {
	// The agent's binary is also its chart renderer: a child process it
	// starts to render a tenant's chart, bounded, before anything else.
	if len(os.Args) > 1 && os.Args[1] == chartrender.ChildArg {
		os.Exit(chartrender.Main())
	}
	var (
		metricsAddr           string
		eventsAddr            string
		notificationMode      string
		metricsServer         string
		dataPlane             string
		healthAddr            string
		concurrent            int
		analysisWorkers       int
		analysisPerNamespace  int
		analysisStepTimeout   time.Duration
		dataPlaneSettle       time.Duration
		clientOptions         client.Options
		logOptions            logger.Options
		leaderElectionOptions leaderelection.Options
		rateLimiterOptions    helper.RateLimiterOptions
		watchOptions          helper.WatchOptions
		featureGates          feathelper.FeatureGates
		aclOptions            acl.Options
		defaultServiceAccount string
		clusterName           string
		showVersion           bool
	)

	flag.StringVar(&metricsAddr, "metrics-addr", ":8080", "The address the metric endpoint binds to.")
	flag.StringVar(&eventsAddr, "events-addr", "", "The address of the events receiver (notification-controller), e.g. http://notification-controller.flux-system.svc.")
	flag.StringVar(&notificationMode, "notification-mode", string(notifier.ModeOwner),
		"Where Canary events go besides Kubernetes Events: 'owner' (Flux events attributed to the Kustomization or HelmRelease that applied the target), "+
			"'canary' (Flux events about the Canary) or 'direct' (only the Providers of spec.alerts); the serin.dev/notification-mode annotation overrides it per Canary.")
	flag.StringVar(&metricsServer, "metrics-server", "",
		"The Prometheus URL the built-in checks (request-success-rate, request-duration, grpc-success-rate) query, e.g. http://prometheus.monitoring:9090; "+
			"without it they fail. MetricTemplates name their own provider.")
	flag.StringVar(&dataPlane, "data-plane", string(dataplane.Default),
		"The data plane whose metrics the built-in checks query when a Canary sets no spec.routing.dataPlane: "+
			"traefik, envoy-gateway, istio, nginx-gateway-fabric, cilium, contour, kuma, linkerd or application (the pods' own metrics).")
	flag.StringVar(&healthAddr, "health-addr", ":9440", "The address the health endpoint binds to.")
	flag.StringVar(&clusterName, "cluster-name", "",
		"The name of this cluster (a DNS label), part of the commit status context serin/CLUSTER/NAMESPACE/NAME its Canaries post, "+
			"so that two clusters applying one path never overwrite each other's verdict; a wave reads it with spec.gitops.promote[].canary.cluster.")
	// A reconcile mostly waits on the API server (a status patch per step):
	// at 2,000 canaries on a 10 s interval that is 200 steps a second, which
	// Flux's usual 4 workers cannot carry when a write takes 20 ms or more
	// (bench/results/history.md).
	flag.IntVar(&concurrent, "concurrent", 32, "The number of concurrent canary reconciles.")
	// Webhooks and metric queries never run in a reconcile: an analysis
	// step's calls run all at once in this pool; a step still running
	// after a second gives its worker back, so that a hanging dependency
	// never holds up the other Canaries (docs/guides/agent.md#analysis).
	flag.IntVar(&analysisWorkers, "analysis-workers", analysis.DefaultWorkers,
		"The number of analysis steps (webhooks and metric checks of one step, called at once) started at the same time; "+
			"a step running for more than a second gives its worker back, and at most 8 times this many steps are in flight.")
	flag.IntVar(&analysisPerNamespace, "analysis-max-in-flight-per-namespace", 0,
		"The analysis steps of one namespace in flight at most, so that a tenant whose webhooks hang holds that share of the pool and no more; 0 for a quarter of the steps in flight (8 × --analysis-workers / 4).")
	flag.DurationVar(&dataPlaneSettle, "data-plane-settle-time", 2*time.Second,
		"How long after the primary's endpoints changed a promotion waits before it moves traffic or completes: the time the data plane takes to stop sending requests to the pods of the previous revision (Traefik's providersThrottleDuration is 2s by default).")
	flag.DurationVar(&analysisStepTimeout, "analysis-step-timeout", analysis.DefaultStepTimeout,
		"The deadline of all the calls of one analysis step; a call still unanswered then fails its check.")
	// Flux's tenancy flags, with their names and meaning
	// (docs/security.md): cross-namespace references and impersonation.
	aclOptions.BindFlags(flag.CommandLine)
	flag.StringVar(&defaultServiceAccount, "default-service-account", "",
		"The service account, in a Canary's namespace, that serin impersonates for a Canary without spec.serviceAccountName; "+
			"empty acts as the agent itself.")
	flag.BoolVar(&showVersion, "version", false, "Print the version and exit.")
	clientOptions.BindFlags(flag.CommandLine)
	// One agent runs thousands of canaries, whose steps come in bursts: a
	// step writes the status and an event. Flux's defaults (50/300) would
	// spread a burst of 2,000 steps over many seconds.
	setFlagDefault("kube-api-qps", "500")
	setFlagDefault("kube-api-burst", "1000")
	logOptions.BindFlags(flag.CommandLine)
	leaderElectionOptions.BindFlags(flag.CommandLine)
	rateLimiterOptions.BindFlags(flag.CommandLine)
	watchOptions.BindFlags(flag.CommandLine)
	featureGates.BindFlags(flag.CommandLine)
	var revertOptions gitopsRevertOptions
	revertOptions.BindFlags(flag.CommandLine)
	flag.Parse()

	build := version.Get()
	if showVersion {
		fmt.Println(build.Version)
		return
	}

	logger.SetLogger(logger.NewLogger(logOptions))
	setupLog.Info("starting serin-agent", "version", build.Version, "commit", build.GitCommit,
		"treeState", build.GitTreeState, "go", build.GoVersion, "platform", build.Platform)

	if err := featureGates.WithLogger(setupLog).SupportedFeatures(features.FeatureGates()); err != nil {
		setupLog.Error(err, "unable to load feature gates")
		os.Exit(1)
	}

	defaultDataPlane, err := dataplane.Parse(dataPlane)
	if err != nil {
		setupLog.Error(err, "invalid --data-plane")
		os.Exit(1)
	}
	if metricsServer != "" {
		if u, err := url.Parse(metricsServer); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			setupLog.Error(fmt.Errorf("%q is not an http(s) URL", metricsServer), "invalid --metrics-server")
			os.Exit(1)
		}
	}

	watchNamespace := ""
	if !watchOptions.AllNamespaces {
		watchNamespace = os.Getenv("RUNTIME_NAMESPACE")
	}
	watchSelector, err := helper.GetWatchSelector(watchOptions)
	if err != nil {
		setupLog.Error(err, "unable to configure watch label selector")
		os.Exit(1)
	}

	// The caches of the objects serin generates and those its Canaries
	// name hold only what carries this shard's watch label: the agent's
	// memory is set by its Canaries, not by the cluster (controllers/cache_scope.go).
	watchLabel := workload.WatchLabel(watchOptions.LabelSelector)
	setupLog.Info("caching the objects labelled "+watchLabel+"="+workload.WatchLabelValue, "watchLabelSelector", watchOptions.LabelSelector)

	restConfig := client.GetConfigOrDie(clientOptions)
	mgrOptions := ctrl.Options{
		Scheme:                        scheme,
		HealthProbeBindAddress:        healthAddr,
		LeaderElection:                leaderElectionOptions.Enable,
		LeaderElectionReleaseOnCancel: leaderElectionOptions.ReleaseOnCancel,
		LeaseDuration:                 &leaderElectionOptions.LeaseDuration,
		RenewDeadline:                 &leaderElectionOptions.RenewDeadline,
		RetryPeriod:                   &leaderElectionOptions.RetryPeriod,
		LeaderElectionID:              leaderelection.GenerateID("serin-leader-election", watchOptions.LabelSelector),
		// In a cluster the Lease lives in the agent's own namespace; run
		// elsewhere, RUNTIME_NAMESPACE (Flux's convention) names it.
		LeaderElectionNamespace: os.Getenv("RUNTIME_NAMESPACE"),
		Logger:                  ctrl.Log,
		Cache: ctrlcache.Options{
			// Nothing of serin's reads managedFields; without them a cached
			// Deployment, Service or EndpointSlice takes about a third less
			// memory (the heap profile at 2,000 canaries).
			DefaultTransform: ctrlcache.TransformStripManagedFields(),
			ByObject:         cacheByObject(restConfig, watchSelector, watchLabel),
		},
		Controller: ctrlcfg.Controller{
			RecoverPanic:            ptr.To(true),
			MaxConcurrentReconciles: concurrent,
		},
		Metrics: metricsserver.Options{
			BindAddress:   metricsAddr,
			ExtraHandlers: pprof.GetHandlers(),
		},
		GracefulShutdownTimeout: ptr.To(30 * time.Second),
	}
	if watchNamespace != "" {
		mgrOptions.Cache.DefaultNamespaces = map[string]ctrlcache.Config{watchNamespace: {}}
	}

	mgr, err := ctrl.NewManager(restConfig, mgrOptions)
	if err != nil {
		setupLog.Error(err, "unable to start manager")
		os.Exit(1)
	}
	probes.SetupChecks(mgr, setupLog)

	tenants := tenancy.New(restConfig, mgr.GetScheme(), mgr.GetRESTMapper(), mgr.GetClient(), mgr.GetAPIReader(), tenancy.Options{
		NoCrossNamespaceRefs:  aclOptions.NoCrossNamespaceRefs,
		DefaultServiceAccount: defaultServiceAccount,
	})

	if errs := validation.IsDNS1123Label(clusterName); clusterName != "" && len(errs) > 0 {
		setupLog.Error(errors.New(strings.Join(errs, "; ")), "invalid --cluster-name: a DNS label")
		os.Exit(1)
	}
	mode, err := notifier.ParseMode(notificationMode)
	if err != nil {
		setupLog.Error(err, "invalid --notification-mode")
		os.Exit(1)
	}
	// Kubernetes Events only: the notifier sends the Flux events, so that
	// notification-controller does not get each event twice.
	eventRecorder := mgr.GetEventRecorderFor(controllers.ControllerName) //nolint:staticcheck // the reconciler uses the core/v1 events API
	notifications := notifier.New(notifier.Options{
		Mode:                mode,
		EventsAddr:          eventsAddr,
		Reader:              mgr.GetClient(),
		APIReader:           mgr.GetAPIReader(),
		ReportingController: controllers.ControllerName,
		ClusterName:         clusterName,
		Logger:              ctrl.Log.WithName("notifier"),
		Tenancy:             tenants,
	})
	if err := mgr.Add(notifications); err != nil {
		setupLog.Error(err, "unable to add the notifier")
		os.Exit(1)
	}

	ctx := ctrl.SetupSignalHandler()
	webhooks := &analysis.Webhooks{Tenancy: tenants}
	checks := &analysis.Metrics{
		Tenancy:       tenants,
		Reader:        mgr.GetClient(),
		Pods:          mgr.GetAPIReader(),
		MetricsServer: metricsServer,
		DataPlane:     defaultDataPlane,
	}
	reconciler := &controllers.CanaryReconciler{
		Client:          mgr.GetClient(),
		EventRecorder:   eventRecorder,
		Metrics:         helper.NewMetrics(mgr, metrics.MustMakeRecorder(), v1alpha1.CanaryFinalizer),
		ControllerName:  controllers.ControllerName,
		Notifier:        notifications,
		Webhooks:        webhooks,
		Checks:          checks,
		Tenancy:         tenants,
		WatchLabel:      watchLabel,
		Shard:           shardOf(watchOptions.LabelSelector, watchSelector),
		DataPlaneSettle: dataPlaneSettle,
		ClusterName:     clusterName,
		Analysis: analysis.NewRunner(webhooks, checks, analysis.RunnerOptions{
			Workers:                 analysisWorkers,
			MaxInFlightPerNamespace: analysisPerNamespace,
			StepTimeout:             analysisStepTimeout,
		}),
	}
	if revertOptions.Enabled {
		sealKey, err := revertOptions.sealKey(ctx, restConfig)
		if err != nil {
			// An agent that would write unsealed commits beside the
			// sealed ones it no longer recognises does not start.
			setupLog.Error(err, "unable to read or create the commit seal key: give the agent get and create on that Secret, or --git-commit-seal-secret='' to seal nothing")
			os.Exit(1)
		}
		reverter, err := revertOptions.Reverter(mgr.GetAPIReader(), gitops.WithNoCrossNamespaceRefs(aclOptions.NoCrossNamespaceRefs),
			gitops.WithCommitSealKey(sealKey))
		if err != nil {
			setupLog.Error(err, "unable to configure GitOps revert")
			os.Exit(1)
		}
		reconciler.Reverter = reverter
		reconciler.Promoter = reverter.Promoter()
		if revertOptions.TokenFile != "" && strings.TrimSpace(revertOptions.TokenHosts) == "" {
			setupLog.Info("warning: --git-provider-token-file is given without --git-provider-hosts: the token is sent to no host; each GitRepository's own secret is used")
		}
		if hosts, err := gitops.ParseHostList(revertOptions.TokenHosts); err == nil && revertOptions.TokenFile != "" && len(hosts.PlainHTTP()) > 0 {
			setupLog.Info("warning: --git-provider-hosts lets the agent's token travel over plain HTTP", "hosts", strings.Join(hosts.PlainHTTP(), ","))
		}
	}
	if err := reconciler.SetupWithManager(ctx, mgr, controllers.CanaryReconcilerOptions{
		MaxConcurrentReconciles: concurrent,
		RateLimiter:             rateLimiterOptions,
	}); err != nil {
		setupLog.Error(err, "unable to create controller", "controller", v1alpha1.CanaryKind)
		os.Exit(1)
	}
	// After the Canary controller, which indexes CanaryGroups by member.
	if err := (&controllers.CanaryGroupReconciler{
		Client:         mgr.GetClient(),
		EventRecorder:  eventRecorder,
		ControllerName: controllers.ControllerName,
		Notifier:       notifications,
		Shard:          shardOf(watchOptions.LabelSelector, watchSelector),
		APIReader:      mgr.GetAPIReader(),
	}).SetupWithManager(ctx, mgr); err != nil {
		setupLog.Error(err, "unable to create controller", "controller", v1alpha1.CanaryGroupKind)
		os.Exit(1)
	}

	setupLog.Info("starting manager")
	if err := mgr.Start(ctx); err != nil {
		setupLog.Error(err, "problem running manager")
		os.Exit(1)
	}
}

// cacheByObject selects the Canaries of this agent (its
// --watch-label-selector) and, of the kinds serin generates and its
// Canaries name, the objects carrying its watch label. A kind whose API is
// not installed (the Gateway API, KEDA) is left out: the cache could not
// start with it, and the controller watches it only once it is, after a
// restart.
func cacheByObject(cfg *rest.Config, canaries labels.Selector, watchLabel string) map[ctrlclient.Object]ctrlcache.ByObject {
	byObject := map[ctrlclient.Object]ctrlcache.ByObject{
		&v1alpha1.Canary{}: {Label: canaries},
		// Every CanaryGroup, whatever its shard (they are few): a member
		// sees a group of another shard, and stalls saying so; the group
		// controller reconciles its own shard's (controllers/shard.go).
		&v1alpha1.CanaryGroup{}: {},
	}
	mapper, err := restMapper(cfg)
	if err != nil {
		setupLog.Error(err, "unable to discover the cluster's APIs")
		os.Exit(1)
	}
	for _, obj := range controllers.WatchedObjects() {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			continue
		}
		if _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			continue
		}
		byObject[obj] = ctrlcache.ByObject{Label: workload.WatchSelector(watchLabel)}
	}
	return byObject
}

// shardOf is the selector of the agent's shard: nil when
// --watch-label-selector is not set (every Canary is the agent's).
func shardOf(flag string, selector labels.Selector) labels.Selector {
	if strings.TrimSpace(flag) == "" {
		return nil
	}
	return selector
}

// restMapper discovers the cluster's APIs.
func restMapper(cfg *rest.Config) (meta.RESTMapper, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return apiutil.NewDynamicRESTMapper(cfg, httpClient)
}

// gitopsRevertOptions are the flags of GitOps revert (gitops.GitReverter).
type gitopsRevertOptions struct {
	Enabled         bool
	AuthorName      string
	AuthorEmail     string
	MessageTemplate string
	Provider        string
	TokenFile       string
	TokenHosts      string
	// TrustRepositoryCA lets the token file trust a GitRepository's
	// ca.crt (docs/security.md#credentials-per-host).
	TrustRepositoryCA bool
	SigningKey        string
	SigningPass       string
	// SealSecret names the Secret of the commit seal key ([namespace/]name).
	SealSecret string
	// MaxConcurrent, MaxCloneSize and CloneDir bound the reverts
	// (docs/gitops-revert.md#limits).
	MaxConcurrent int
	MaxCloneSize  resource.QuantityValue
	MaxFileSize   resource.QuantityValue
	CloneDir      string
	// CloneDiskBudget bounds all clones together, ConnectTimeout each
	// request of a clone (docs/security.md#fair-share-and-disk).
	CloneDiskBudget resource.QuantityValue
	ConnectTimeout  time.Duration
	// The bounds of a HelmRelease chart's rendering, in a child process
	// (docs/security.md#what-a-tenants-chart-can-make-the-agent-do), and
	// the chart fetches' loopback exception.
	ChartMaxMemory          resource.QuantityValue
	ChartMaxCPU             time.Duration
	ChartTimeout            time.Duration
	ChartMaxChartSize       resource.QuantityValue
	ChartMaxOutput          resource.QuantityValue
	ChartMaxConcurrent      int
	ChartFetchAllowLoopback bool
}

// BindFlags binds the GitOps revert flags.
func (o *gitopsRevertOptions) BindFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.Enabled, "gitops-revert", true,
		"Revert bad revisions in Git (Canaries with spec.gitops.revert): a pull request, or a push with mode Push.")
	fs.StringVar(&o.AuthorName, "git-author-name", "serin", "The author name of revert commits.")
	fs.StringVar(&o.AuthorEmail, "git-author-email", "serin@noreply.serin.dev", "The author email of revert commits.")
	fs.StringVar(&o.MessageTemplate, "git-commit-template-file", "",
		"A Go text/template file for revert commit messages (see docs/gitops-revert.md); empty for the default.")
	fs.StringVar(&o.Provider, "git-provider", "",
		"The Git host API for pull requests: github, gitlab or gitea; inferred for github.com and gitlab.com URLs.")
	fs.StringVar(&o.TokenFile, "git-provider-token-file", "",
		"A file holding the agent's own Git host API token, sent only to the hosts of --git-provider-hosts; elsewhere the GitRepository secret's password or bearerToken.")
	fs.StringVar(&o.TokenHosts, "git-provider-hosts", "",
		"The Git hosts --git-provider-token-file is sent to, for pull requests and commit status reads, comma-separated: host[:port] or https://host[:port] (over TLS only), http://host[:port] (plain HTTP to that host, explicitly); none by default.")
	fs.BoolVar(&o.TrustRepositoryCA, "git-provider-trust-repository-ca", false,
		"Let --git-provider-token-file trust the ca.crt of a GitRepository's secret; by default the agent's token trusts the system's roots only (SSL_CERT_FILE, SSL_CERT_DIR), since whoever writes that secret could stand in for the listed host.")
	fs.StringVar(&o.SigningKey, "git-signing-key-file", "",
		"An ASCII-armored OpenPGP private key file: revert commits are signed with it.")
	fs.StringVar(&o.SigningPass, "git-signing-passphrase-file", "",
		"A file holding the passphrase of an encrypted --git-signing-key-file.")
	fs.StringVar(&o.SealSecret, "git-commit-seal-secret", "serin-commit-seal",
		"The Secret ([namespace/]name; the namespace defaults to RUNTIME_NAMESPACE) holding the key that seals every commit serin writes, created with a random key when missing: "+
			"a branch whose commit carries a valid seal is serin's own across restarts (resumed or rebased, never written beside). Empty, or no namespace, to seal nothing.")
	fs.IntVar(&o.MaxConcurrent, "gitops-max-concurrent-reverts", gitops.DefaultMaxConcurrentReverts,
		"The number of reverts (clone, plan, push) run at the same time; reverts of one repository branch run one at a time.")
	o.MaxCloneSize.Quantity = *resource.NewQuantity(gitops.DefaultMaxCloneSize, resource.BinarySI)
	fs.Var(&o.MaxCloneSize, "gitops-max-clone-size",
		"The disk a revert's clone may take (a quantity: 512Mi, 2Gi); a larger clone stops the revert. 0 for no bound.")
	o.MaxFileSize.Quantity = *resource.NewQuantity(gitops.DefaultMaxFileSize, resource.BinarySI)
	fs.Var(&o.MaxFileSize, "gitops-max-file-size",
		"The largest file (Git object) a revert clones (a quantity: 16Mi); a repository holding a larger one is refused as its pack arrives, before the object is inflated.")
	fs.StringVar(&o.CloneDir, "gitops-clone-dir", "",
		"The directory reverts clone into (each clone is removed when its revert ends); empty for $TMPDIR or /tmp.")
	o.CloneDiskBudget.Quantity = *resource.NewQuantity(gitops.DefaultCloneDiskBudget, resource.BinarySI)
	fs.Var(&o.CloneDiskBudget, "gitops-clone-disk-budget",
		"The disk all clones (reverts, promotions, verdict reads) may take together (a quantity); each write is counted before it is made. Keep it below the clone directory's volume. 0 for no bound.")
	fs.DurationVar(&o.ConnectTimeout, "gitops-connect-timeout", gitops.DefaultConnectTimeout,
		"How long a Git host may take to answer each request of a clone or a fetch over HTTP(S), connection and TLS handshake included; a host that does not answer fails the job, retried with backoff. 0 for no bound but the job's 2 minutes.")
	o.bindChartFlags(fs)
}

// bindChartFlags binds the bounds of a HelmRelease chart's rendering.
func (o *gitopsRevertOptions) bindChartFlags(fs *flag.FlagSet) {
	o.ChartMaxMemory.Quantity = *resource.NewQuantity(chartrender.DefaultMaxMemory, resource.BinarySI)
	fs.Var(&o.ChartMaxMemory, "chart-render-max-memory",
		"The memory a chart's rendering (a child process of the agent) may take (a quantity); past it the child fails and the revert or wave compares the chart's inputs instead.")
	fs.DurationVar(&o.ChartMaxCPU, "chart-render-max-cpu-time", chartrender.DefaultMaxCPU,
		"The CPU time a chart's rendering may use (whole seconds); past it the child is killed.")
	fs.DurationVar(&o.ChartTimeout, "chart-render-timeout", chartrender.DefaultTimeout,
		"How long a chart's rendering may take, wall clock; past it the child (and its process group) is killed.")
	o.ChartMaxChartSize.Quantity = *resource.NewQuantity(chartrender.DefaultMaxChartBytes, resource.BinarySI)
	fs.Var(&o.ChartMaxChartSize, "chart-render-max-chart-size",
		"The bytes of a chart's files and unpacked subchart archives together (a quantity), counted before they are read.")
	o.ChartMaxOutput.Quantity = *resource.NewQuantity(chartrender.DefaultMaxOutputBytes, resource.BinarySI)
	fs.Var(&o.ChartMaxOutput, "chart-render-max-output",
		"The bytes of a chart's rendered manifests (a quantity).")
	fs.IntVar(&o.ChartMaxConcurrent, "chart-render-max-concurrent", chartrender.DefaultMaxConcurrent,
		"The chart renderings (child processes) run at the same time, across the agent.")
	fs.BoolVar(&o.ChartFetchAllowLoopback, "chart-fetch-allow-loopback", false,
		"Let a HelmRepository's URL, or a chart URL of its index, be a loopback address (test beds); link-local and metadata addresses are refused whatever this says.")
}

// chartRenderer is the chart renderer the flags describe.
func (o *gitopsRevertOptions) chartRenderer() (*chartrender.Renderer, error) {
	if o.ChartMaxMemory.Value() <= 0 || o.ChartMaxCPU < time.Second || o.ChartTimeout <= 0 ||
		o.ChartMaxChartSize.Value() <= 0 || o.ChartMaxOutput.Value() <= 0 || o.ChartMaxConcurrent < 1 {
		return nil, errors.New("the --chart-render-* bounds must be positive (the CPU time at least 1s, the concurrency at least 1)")
	}
	return chartrender.New(chartrender.Limits{
		MaxMemory: o.ChartMaxMemory.Value(), MaxCPU: o.ChartMaxCPU, Timeout: o.ChartTimeout,
		MaxChartBytes: o.ChartMaxChartSize.Value(), MaxOutputBytes: o.ChartMaxOutput.Value(), MaxConcurrent: o.ChartMaxConcurrent,
	}), nil
}

// sealKey reads (or creates) the commit seal key of --git-commit-seal-secret
// with a client of its own: the manager's cache has not started yet. No
// Secret named, or no namespace for it, is no key.
func (o *gitopsRevertOptions) sealKey(ctx context.Context, cfg *rest.Config) ([]byte, error) {
	namespace, name, found := strings.Cut(strings.TrimSpace(o.SealSecret), "/")
	if !found {
		namespace, name = os.Getenv("RUNTIME_NAMESPACE"), namespace
	}
	if name == "" || namespace == "" {
		setupLog.Info("commits are not sealed: no --git-commit-seal-secret, or no RUNTIME_NAMESPACE for it; serin tells its own branches by planning them again")
		return nil, nil
	}
	c, err := ctrlclient.New(cfg, ctrlclient.Options{})
	if err != nil {
		return nil, err
	}
	// The API server may be slow to answer at start: tried for a minute,
	// but a refusal (RBAC, a Secret without a key) is final.
	ref := types.NamespacedName{Namespace: namespace, Name: name}
	var key []byte
	err = wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: time.Second, Factor: 2, Steps: 6, Cap: 30 * time.Second},
		func(ctx context.Context) (bool, error) {
			callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			var err error
			key, err = gitops.CommitSealKey(callCtx, c, ref)
			switch {
			case err == nil:
				return true, nil
			case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || errors.Is(err, gitops.ErrNoSealKey):
				return false, err
			}
			setupLog.Info("commit seal key not read yet, trying again", "secret", ref.String(), "error", err.Error())
			return false, nil
		})
	return key, err
}

// Reverter builds the GitReverter the flags describe.
func (o *gitopsRevertOptions) Reverter(reader ctrlclient.Reader, extra ...gitops.ReverterOption) (*gitops.GitReverter, error) {
	var template string
	if o.MessageTemplate != "" {
		b, err := os.ReadFile(o.MessageTemplate)
		if err != nil {
			return nil, err
		}
		template = string(b)
	}
	opts := []gitops.ReverterOption{
		gitops.WithAuthor(o.AuthorName, o.AuthorEmail),
		gitops.WithMessageTemplate(template),
		gitops.WithProvider(o.Provider),
		gitops.WithProviderTokenFile(o.TokenFile),
		gitops.WithProviderHosts(o.TokenHosts),
		gitops.WithProviderTrustRepositoryCA(o.TrustRepositoryCA),
		gitops.WithMaxConcurrentReverts(o.MaxConcurrent),
		gitops.WithMaxCloneSize(o.MaxCloneSize.Value()),
		gitops.WithMaxFileSize(o.MaxFileSize.Value()),
		gitops.WithCloneDir(o.CloneDir),
		gitops.WithCloneDiskBudget(o.CloneDiskBudget.Value()),
		gitops.WithConnectTimeout(o.ConnectTimeout),
	}
	renderer, err := o.chartRenderer()
	if err != nil {
		return nil, err
	}
	opts = append(opts, gitops.WithChartRenderer(renderer), gitops.WithChartFetchAllowLoopback(o.ChartFetchAllowLoopback))
	if o.SigningKey != "" {
		var pass []byte
		if o.SigningPass != "" {
			var err error
			if pass, err = os.ReadFile(o.SigningPass); err != nil {
				return nil, err
			}
		}
		key, err := gitops.LoadSigningKey(o.SigningKey, string(pass))
		if err != nil {
			return nil, err
		}
		opts = append(opts, gitops.WithSigningKey(key))
	}
	opts = append(opts, extra...)
	return gitops.NewGitReverter(reader, opts...)
}

// setFlagDefault changes the default of a flag bound by a library.
func setFlagDefault(name, value string) {
	f := flag.CommandLine.Lookup(name)
	if f == nil {
		return
	}
	_ = f.Value.Set(value)
	f.DefValue = value
}
