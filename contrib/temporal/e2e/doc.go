// Package e2e runs hitl-temporal end to end: the real hitl, the real
// hitl-temporal worker processes and the Temporal dev server (temporal
// server start-dev from the Temporal CLI v1.5.1). Its tests skip, saying
// so, when no temporal binary is found ($HITL_TEMPORAL_BIN, temporal on
// PATH, or $HOME/.cache/hitl-temporal/bin/temporal, where .ci/run builds it).
package e2e
