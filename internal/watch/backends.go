package watch

import (
	"iter"
	"maps"
	"time"
)

// backendSet is a host's values of its instance headers: the busiest
// MaxBackends have series of their own (labelled), the rest count as
// "other". Requests are counted per value for at most 4·MaxBackends values
// (space-saving: a new value takes the place of the least counted value
// without series, its count inherited as an overestimate), and halved
// every Retire, so "busiest" is recent.
type backendSet struct {
	labelled map[string]time.Time // header=value -> last seen
	counts   map[string]*tally
	halved   time.Time
}

// tally is a value's requests counted, and how many of them it may have
// inherited (space-saving's overestimate): n - over are surely its own.
type tally struct{ n, over int64 }

// candidates is how many values per labelled place a host counts.
const candidates = 4

// promoteRatio is how much busier than the least busy labelled value a
// value must surely be to take its place: a margin, so that two alike do
// not swap back and forth, and values seen once each never do.
const promoteRatio = 2

func newBackendSet(at time.Time) *backendSet {
	return &backendSet{labelled: map[string]time.Time{}, counts: map[string]*tally{}, halved: at}
}

// see counts a request of key at, and says whether key has series of its
// own; demoted is the labelled key it took the place of, "" when none.
func (s *backendSet) see(key string, at time.Time, max int) (labelled bool, demoted string) {
	c := s.counts[key]
	if c == nil {
		c = &tally{}
		if len(s.counts) >= candidates*max {
			least := s.least(maps.Keys(s.counts), func(k string) bool { _, ok := s.labelled[k]; return ok })
			c.n, c.over = s.counts[least].n, s.counts[least].n
			delete(s.counts, least)
		}
		s.counts[key] = c
	}
	c.n++
	if _, ok := s.labelled[key]; ok || len(s.labelled) < max {
		s.labelled[key] = at
		return true, ""
	}
	least := s.least(maps.Keys(s.labelled), func(k string) bool { return k == key })
	if c.n-c.over <= promoteRatio*s.sure(least) {
		return false, ""
	}
	delete(s.labelled, least)
	s.labelled[key] = at
	return true, least
}

// sure is how many requests key surely had.
func (s *backendSet) sure(key string) int64 {
	if c := s.counts[key]; c != nil {
		return c.n - c.over
	}
	return 0
}

// least is the key of keys surely counted least (ties: the smallest key);
// the keys skip says are left out.
func (s *backendSet) least(keys iter.Seq[string], skip func(string) bool) string {
	var key string
	n := int64(-1)
	for k := range keys {
		if c := s.sure(k); !skip(k) && (n < 0 || c < n || c == n && k < key) {
			key, n = k, c
		}
	}
	return key
}

// halve halves every count once per every, so that old traffic weighs
// less than new.
func (s *backendSet) halve(at time.Time, every time.Duration) {
	if at.Sub(s.halved) < every {
		return
	}
	s.halved = at
	for k, c := range s.counts {
		if c.n /= 2; c.n == 0 {
			delete(s.counts, k)
		}
		c.over /= 2
	}
}
