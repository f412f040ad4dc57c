package cassette

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// recordTurns records one exchange per body (the server answers "re:BODY")
// and returns the cassette's path.
func recordTurns(t *testing.T, bodies ...string) (path, url string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, "re:"+string(b))
	}))
	t.Cleanup(srv.Close)
	path = filepath.Join(t.TempDir(), "run.cassette")
	cas, err := Record(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bodies {
		res, err := cas.Client().Post(srv.URL+"/v1/x", "application/json", strings.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	if err := cas.Close(); err != nil {
		t.Fatal(err)
	}
	return path, srv.URL
}

// post sends body through cas and returns the replayed answer, or the
// *MissError.
func post(cas *Cassette, url, body string) (string, error) {
	res, err := cas.Client().Post(url+"/v1/x", "application/json", strings.NewReader(body))
	if err != nil {
		var miss *MissError
		if errors.As(err, &miss) {
			return "", miss
		}
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return string(b), err
}

// A resumed run goes on from the middle of the recording: after Seek its
// first request finds its turn, the turns before are passed over, and the
// turns after are matched in order again. Without Seek the same request is
// a miss at turn 1.
func TestSeekResumesAtTheMatchingTurn(t *testing.T) {
	path, url := recordTurns(t, `{"turn":1}`, `{"turn":2}`, `{"turn":3}`, `{"turn":4}`)

	strict, err := Replay(path)
	if err != nil {
		t.Fatal(err)
	}
	var miss *MissError
	if _, err := post(strict, url, `{"turn":2}`); !errors.As(err, &miss) || miss.Turn != 1 || !miss.Differs {
		t.Fatalf("without Seek: %v, want a miss at turn 1", err)
	}

	for _, tc := range []struct {
		name  string
		sends []string // after Seek
		want  []string // answer, or "miss N"
	}{
		{"from turn 2", []string{`{"turn":2}`, `{"turn":3}`, `{"turn":4}`}, []string{`re:{"turn":2}`, `re:{"turn":3}`, `re:{"turn":4}`}},
		{"from turn 3", []string{`{"turn":3}`, `{"turn":4}`}, []string{`re:{"turn":3}`, `re:{"turn":4}`}},
		{"a passed-over turn is not played after", []string{`{"turn":3}`, `{"turn":1}`}, []string{`re:{"turn":3}`, "miss 4"}},
		{"in order after the seek", []string{`{"turn":2}`, `{"turn":4}`}, []string{`re:{"turn":2}`, "miss 3"}},
		{"no such turn", []string{`{"turn":9}`}, []string{"miss, resumed"}},
		{"past the end", []string{`{"turn":4}`, `{"turn":5}`}, []string{`re:{"turn":4}`, "miss 5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cas, err := Replay(path)
			if err != nil {
				t.Fatal(err)
			}
			defer cas.Close()
			cas.Seek()
			for i, b := range tc.sends {
				got, err := post(cas, url, b)
				if errors.As(err, &miss) {
					got = "miss " + strconv.Itoa(miss.Turn)
					if miss.Resumed {
						got = "miss, resumed"
					}
				} else if err != nil {
					t.Fatal(err)
				}
				if got != tc.want[i] {
					t.Errorf("request %d (%s): %q, want %q", i+1, b, got, tc.want[i])
				}
			}
		})
	}
}
