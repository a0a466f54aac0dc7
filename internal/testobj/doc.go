// Package testobj has fluent builders of the objects serin's tests create
// (MakeX(...).Field(...).Obj()), instead of YAML walls.
package testobj
