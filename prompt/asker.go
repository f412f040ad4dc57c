package prompt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Answerer is a source of answers consulted before the front end (session replay, the
// answers file). Answer returns ok false when it has no answer for q.
type Answerer interface {
	Answer(q Question) (a Answer, ok bool, err error)
}

// Observer is told of each question and its answer (events, the session
// journal). Answered sees the answer as the model will: secrets replaced.
type Observer interface {
	Requested(q Question)
	Answered(q Question, a Answer)
}

// Unanswered is what a question nobody answered becomes (--unanswered).
type Unanswered string

const (
	UnansweredStop    Unanswered = "stop"
	UnansweredCancel  Unanswered = "cancel"
	UnansweredDefault Unanswered = "default"
)

// ParseUnanswered checks a --unanswered value.
func ParseUnanswered(s string) (Unanswered, error) {
	switch u := Unanswered(s); u {
	case UnansweredStop, UnansweredCancel, UnansweredDefault:
		return u, nil
	}
	return "", fmt.Errorf("--unanswered %q: expected stop, cancel or default", s)
}

// Asker asks the questions of a run. For each question it tries, in order,
// the Sources, the FrontEnd (bounded by Timeout), and then the Unanswered
// policy. It never answers a question silently: an unanswered consent
// question is cancelled, never defaulted.
type Asker struct {
	Sources  []Answerer
	FrontEnd FrontEnd // nil: --prompt none
	// NoFrontEnd says why FrontEnd is nil when the person did not choose
	// it ("": --prompt none).
	NoFrontEnd string
	Timeout    time.Duration
	Unanswered Unanswered
	Observer   Observer
	Secrets    *Secrets
	// BeforeWait, when set, is told of each question before the front end
	// asks it (a person is about to be waited for: on_user_input hooks).
	BeforeWait func(q Question)
	// OnBadAnswer is told of an answer that cannot be used (a JSONL line, an
	// answers-file entry) before the run stops: the error event.
	OnBadAnswer func(*BadAnswerError)
	// OnRefused is told of a source's answer the consent rule refused
	// (AnsweredBy: a hook answering a person-only question): it answers
	// nothing, and the question goes on to the next source.
	OnRefused func(q Question, src Source, err error)

	mu   sync.Mutex
	next int // number of the next question id
	// waiting are the questions waiting to be asked, by the agent (and
	// task) asking: a positional answer line is not taken while another
	// agent's waits (JSONL.unbound).
	waiting map[string]int
	// asking is held while a question is asked: the agents of a run
	// (background agents run concurrently) ask one question at a time
	// (DESIGN §13), each answer going to the question it was given for.
	asking sync.Mutex
	// stopped is the error that stops the run, once a question got one:
	// no later question is asked (held with asking).
	stopped error
}

// stops says whether err ends the run: no other question may be asked
// after it.
func stops(err error) bool {
	var bad *BadAnswerError
	var stop *StopError
	return errors.As(err, &bad) || errors.As(err, &stop) || errors.Is(err, ErrInterrupted)
}

// SetNext sets the number of the next question id (kept across resume).
func (a *Asker) SetNext(n int) {
	a.mu.Lock()
	a.next = n
	a.mu.Unlock()
}

// Next returns the number of the next question id.
func (a *Asker) Next() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.next
}

func (a *Asker) newID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	return fmt.Sprintf("p%d", a.next)
}

// NewID takes the next question id (pN), for a caller that must know a
// question's id before asking it (an MCP call keeping the ids of its
// questions in the session, to ask them again under them on resume).
func (a *Asker) NewID() string { return a.newID() }

// seen makes sure a question asked under an id of its caller's (pN) is
// never followed by another under the same id.
func (a *Asker) seen(id string) {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "p"))
	if err != nil || !strings.HasPrefix(id, "p") {
		return
	}
	a.mu.Lock()
	a.next = max(a.next, n)
	a.mu.Unlock()
}

// Ask asks q (under q.ID when the caller set one, else the next pN) and
// returns its answer, canonical and with secrets replaced by
// placeholders. Errors: *StopError (the policy is stop), *BadAnswerError,
// ErrInterrupted, or the context's error.
func (a *Asker) Ask(ctx context.Context, q Question) (Answer, error) {
	who := askerName(ctx, q)
	a.wait(who, 1)
	a.asking.Lock()
	defer a.asking.Unlock()
	a.wait(who, -1)
	ctx = context.WithValue(ctx, othersKey{}, func() []string { return a.others(who) })
	if err := ctx.Err(); err != nil {
		return Answer{}, err
	}
	if a.stopped != nil {
		// The run is stopping (a bad answer, nobody to answer, an
		// interrupt): a background agent waiting to ask is not asked.
		return Answer{}, a.stopped
	}
	if f, ok := ctx.Value(fromKey{}).(From); ok && q.Agent == "" {
		q.Agent, q.TaskID, q.Member = f.Agent, f.TaskID, f.Member
	}
	if q.Count == 0 {
		q.Count = 1
	}
	if q.ID == "" {
		q.ID = a.newID()
	} else {
		a.seen(q.ID)
	}
	q = withOptionConsent(q)
	if a.Observer != nil {
		a.Observer.Requested(q)
	}
	ans, err := a.obtain(ctx, q)
	if err != nil && stops(err) {
		a.stopped = err
	}
	if err != nil {
		var bad *BadAnswerError
		if a.OnBadAnswer != nil && errors.As(err, &bad) {
			a.OnBadAnswer(bad)
		}
		return Answer{}, err
	}
	ans = a.hideSecrets(q, ans)
	if a.Observer != nil {
		a.Observer.Answered(q, ans)
	}
	return ans, nil
}

// askerName names who asks q: the agent, and its task for a background
// agent.
func askerName(ctx context.Context, q Question) string {
	f := AgentOf(ctx)
	if q.Agent != "" {
		f = From{Agent: q.Agent, TaskID: q.TaskID}
	}
	name := "agent " + f.Agent
	if f.Agent == "" {
		name = "the agent"
	}
	if f.TaskID != "" {
		name += " (task " + f.TaskID + ")"
	}
	return name
}

// wait counts a question of who waiting to be asked (+1), or no longer
// (-1).
func (a *Asker) wait(who string, n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.waiting == nil {
		a.waiting = map[string]int{}
	}
	a.waiting[who] += n
	if a.waiting[who] <= 0 {
		delete(a.waiting, who)
	}
}

// others are those, but who, whose questions wait to be asked, sorted.
func (a *Asker) others(who string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for w := range a.waiting {
		if w != who {
			out = append(out, w)
		}
	}
	sort.Strings(out)
	return out
}

type othersKey struct{}

// waitingOthers are the others whose questions wait while the question of
// ctx is asked (Asker.Ask).
func waitingOthers(ctx context.Context) []string {
	if f, ok := ctx.Value(othersKey{}).(func() []string); ok {
		return f()
	}
	return nil
}

func (a *Asker) obtain(ctx context.Context, q Question) (Answer, error) {
	for _, s := range a.Sources {
		ans, ok, err := s.Answer(q)
		if err != nil {
			return Answer{}, err
		}
		if !ok {
			continue
		}
		// The consent rule, whatever the source did (rule.go).
		if err := q.AnsweredBy(ans.Source); err != nil {
			if a.OnRefused != nil {
				a.OnRefused(q, ans.Source, err)
			}
			continue
		}
		return ans, nil
	}
	var unanswered *UnansweredError
	if a.FrontEnd == nil {
		why := "no front end (--prompt none)"
		if a.NoFrontEnd != "" {
			why = a.NoFrontEnd
		}
		unanswered = &UnansweredError{Source: SourcePolicy, Reason: why + " and no answer in the answers file"}
	} else {
		if a.BeforeWait != nil {
			a.BeforeWait(q)
		}
		ans, err := a.askFrontEnd(ctx, q)
		if err == nil {
			if err := q.AnsweredBy(ans.Source); err != nil {
				return Answer{}, err
			}
			return ans, nil
		}
		if !errors.As(err, &unanswered) {
			return Answer{}, err
		}
	}
	return a.policy(q, unanswered)
}

func (a *Asker) askFrontEnd(ctx context.Context, q Question) (Answer, error) {
	if a.Timeout <= 0 {
		return a.FrontEnd.Ask(ctx, q)
	}
	tctx, cancel := context.WithTimeoutCause(ctx, a.Timeout, errPromptTimeout)
	defer cancel()
	ans, err := a.FrontEnd.Ask(tctx, q)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(tctx), errPromptTimeout) {
		return Answer{}, &UnansweredError{Source: SourceTimeout, Reason: fmt.Sprintf("no answer within --prompt-timeout %s", a.Timeout)}
	}
	return ans, err
}

var errPromptTimeout = errors.New("prompt timeout")

// policy decides what an unanswered question becomes.
func (a *Asker) policy(q Question, why *UnansweredError) (Answer, error) {
	source := why.Source
	if !q.StopsUnanswered() {
		return Answer{Action: Cancel, Source: source}, nil
	}
	switch a.Unanswered {
	case UnansweredCancel:
		return Answer{Action: Cancel, Source: source}, nil
	case UnansweredDefault:
		// A consent question's default was written by the model: using
		// it would be consent nobody gave. So would a form's default that
		// holds a yes/no field's value. Approvals and remote choices are
		// cancelled, and their tools say nobody was available.
		if len(q.Default) > 0 && q.Defaultable() {
			ans, err := Check(q, Answer{Action: Accept, Content: q.Default})
			if err == nil {
				ans.Source = SourceDefault
				return ans, nil
			}
		}
		return Answer{Action: Cancel, Source: source}, nil
	}
	return Answer{}, &StopError{Question: q, Reason: why.Reason}
}

// Unanswered reports whether nobody answered (the answer was made by the
// policy, end of input or a timeout).
func (a Answer) Unanswered() bool {
	switch a.Source {
	case SourcePolicy, SourceEOF, SourceTimeout, SourceDefault:
		return true
	}
	return false
}

// hideSecrets stores secret values and puts placeholders in their place.
func (a *Asker) hideSecrets(q Question, ans Answer) Answer {
	if ans.Action != Accept || a.Secrets == nil {
		return ans
	}
	if q.Secret {
		value := secretValue(ans.Content)
		p := ""
		if q.SecretSlot > 0 {
			p = a.Secrets.Set(q.SecretSlot, value)
		} else {
			p = a.Secrets.Add(value)
		}
		ans.Content, _ = json.Marshal(p)
		return ans
	}
	secretFields := false
	for _, f := range q.Fields {
		secretFields = secretFields || f.Question.Secret
	}
	if !secretFields {
		return ans
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(ans.Content, &obj) != nil {
		return ans
	}
	for _, f := range q.Fields {
		if v, ok := obj[f.Name]; ok && f.Question.Secret {
			obj[f.Name], _ = json.Marshal(a.Secrets.Add(secretValue(v)))
		}
	}
	ans.Content, _ = json.Marshal(obj)
	return ans
}

// secretValue is the value a secret answer stands for: a string as is, any
// other JSON value (a PIN as an integer) as its JSON text, so that no kind
// of secret reaches the model.
func secretValue(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(content))
}
