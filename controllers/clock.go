package controllers

import "time"

// now is the reconciler's clock; tests may replace Clock.
func (r *CanaryReconciler) now() time.Time {
	if r.Clock != nil {
		return r.Clock()
	}
	return time.Now()
}
