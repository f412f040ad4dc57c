package model_test

import (
	"testing"

	"github.com/hitl-dev/hitl/exec/ext/exttest"
)

// hitl-ext runs the google provider and reads OpenAPI documents.
func TestMain(m *testing.M) { exttest.Main(m) }
