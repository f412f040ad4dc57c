package mcp

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestFieldOrder(t *testing.T) {
	const schema = `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"},"mid":{"type":"boolean"}},"required":["zeta"]}`
	decoded := func() any {
		var v any
		_ = json.Unmarshal([]byte(schema), &v)
		return v
	}
	tests := []struct {
		name, message, want string
	}{
		{"elicitation request", `{"message":"m","requestedSchema":` + schema + `}`, `{"properties":{"zeta":`},
		{"input request inside a tool result", `{"content":[],"inputRequests":{"a":{"method":"elicitation/create","params":{"requestedSchema":` + schema + `}}}}`, `{"properties":{"zeta":`},
		{"not noted", `{"message":"m"}`, `{"properties":{"alpha":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o fieldOrder
			o.note(json.RawMessage(tt.message))
			raw, err := o.schema(decoded())
			if err != nil {
				t.Fatal(err)
			}
			if got := string(raw); len(got) < len(tt.want) || got[:len(tt.want)] != tt.want {
				t.Fatalf("got %s, want it to start %s", got, tt.want)
			}
			var back, orig any
			_ = json.Unmarshal(raw, &back)
			_ = json.Unmarshal([]byte(schema), &orig)
			if fmt.Sprint(back) != fmt.Sprint(orig) {
				t.Fatalf("the schema changed: %s", raw)
			}
		})
	}
}

// The orders kept are bounded: a server sending endless distinct forms
// cannot grow hitl's memory.
func TestFieldOrderBound(t *testing.T) {
	var o fieldOrder
	for i := range 1000 {
		o.note(json.RawMessage(fmt.Sprintf(`{"requestedSchema":{"properties":{"b%d":{},"a":{}}}}`, i)))
	}
	if len(o.order) != maxOrders || len(o.keys) != maxOrders {
		t.Fatalf("kept %d orders (%d keys), want %d", len(o.order), len(o.keys), maxOrders)
	}
}
