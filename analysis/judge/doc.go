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

// Package judge compares a canary with a baseline that serves the same
// traffic at the same time, metric by metric, by statistics that say why
// (issue #47), as Spinnaker Kayenta's NetflixACAJudge does with its
// Mann-Whitney classifier. It is pure: samples in, a verdict out; no
// Kubernetes, no I/O.
//
// Each metric is classified by Classify from two samples, e.g. one value
// per scrape interval of each side. MannWhitney tests whether the canary's
// values rank differently from the baseline's (two-sided, as R's
// wilcox.test: exact below 50 values a side without ties, else the
// normal approximation with the tie and continuity corrections). A ratio
// metric given with its counts (MetricInput.CanaryCounts, e.g. the
// requests behind each value of a success rate) is tested on them
// instead: MantelHaenszel, a Cochran-Mantel-Haenszel test with one 2×2
// table per timestamp (as R's mantelhaen.test), so that what both sides
// share at a timestamp, such as a downstream fault, cancels, and each
// value weighs as many requests as it has. A
// difference that is significant (p < Alpha) is High or Low only when it
// is also large and bad:
//
//   - large: the effect size, the ratio of the canary's mean to the
//     baseline's, is beyond AllowedIncrease (or AllowedDecrease). Means,
//     as Kayenta's, rather than medians: a median hides a change that
//     only some of the values show, such as an error rate that is 0 most
//     of the time. The rank test, insensitive to a lone outlier, guards
//     the mean's weakness: a single slow request that moves the mean is
//     not significant. A baseline mean of 0 makes any other canary mean
//     an infinite change. With counts the effect is the Mantel-Haenszel
//     ratio of the sides' shares of hits, stratified as the test, and
//     the allowed ratio is held against the far end of its 1-alpha
//     confidence interval (Greenland and Robins' variance): a
//     significant change passes only when the requests show that it is
//     within what is allowed, as a non-inferiority trial is judged, not
//     when its estimate happens to fall inside while the truth may not.
//   - bad: the metric's Direction counts the way the canary ranks (U
//     above or below its mean) as bad; a change the other way is a Pass,
//     still reported in the text.
//
// A metric with fewer than MinSamples values a side, or too few for any
// outcome to be significant at its alpha, or with a NaN or infinite
// value, is NoData, never a silent Pass.
//
// Judge scores the classified metrics as Kayenta's weighted scorer: 100
// times the weight of the Pass metrics over the weight of the metrics
// with data (NoData ones are left out), Pass from Bounds.Pass (95),
// Marginal from Bounds.Marginal (75), else Fail. A critical metric that
// is High or Low fails the judgement whatever the score; a judgement with
// no metric with data, or a critical metric without data and a score
// that does not fail, is NoData (Kayenta fails a critical metric without
// data; here the caller decides whether to wait for data or give up).
//
// Every result explains itself: MetricResult.String and Verdict.String
// are one line each, e.g.
//
//	latency p99: canary 182 ms vs baseline 121 ms (+50.4 %, p = 0.002): High
//	score 66.6 (pass >= 95, marginal >= 75): Fail — latency p99 High
//
// and their Explain methods add the sample sizes, the test's statistic
// and method and the Hodges-Lehmann shift.
package judge
