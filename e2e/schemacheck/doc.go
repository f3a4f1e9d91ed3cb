// Package schemacheck validates Animus wire documents against the JSON Schemas
// shipped in shared/schemas (draft 2020-12, one standalone file per type,
// grouped by upstream protocol crate).
//
// The schemas are generated from the upstream Rust types, so they describe the
// derived shape only: omission rules, legacy wire forms and timestamp renderings
// are not visible in them (see shared/schemas/README.md). A passing validation
// is therefore necessary, not sufficient; byte-level rules stay in the tests
// that know them.
//
// Locating the schemas never silently degrades: if shared/schemas cannot be
// found, Default and Load return an error, so a CI run without shared/ fails
// loudly instead of skipping every schema check.
//
// Each <crate>/_all.json bundles every type of a crate under "$defs" with no
// root schema of its own, so it is not loaded; the per-type files are
// self-contained (their "$ref"s all point into their own "$defs") and are
// compiled one by one.
package schemacheck
