package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"

	"github.com/skilld/skilld"
)

// KindStore is the log kind of an agent store write: {"key", "value"}.
const KindStore = "store"

// KVStore is the agent store of a run: values Go skills keep across loads
// (a skill's per-load state is dropped when it unloads; its store values
// are not). Every write is appended to the task log, so a store can be
// rebuilt from the log after a restart (NewKVStoreFromLog). Values are
// JSON; StoreGet and StoreSet give typed access. Safe for concurrent use.
type KVStore struct {
	mu     sync.Mutex
	values map[string]json.RawMessage
	// persist appends a write to the task log; set by the run.
	persist func(ctx context.Context, key string, value json.RawMessage) error
}

// NewKVStore returns a store holding values (nil for an empty one).
func NewKVStore(values map[string]json.RawMessage) *KVStore {
	return &KVStore{values: maps.Clone(values)}
}

// NewKVStoreFromLog rebuilds a store from a task log's entries: the last
// write of each key wins.
func NewKVStoreFromLog(entries []LogEntry) (*KVStore, error) {
	values := map[string]json.RawMessage{}
	for _, e := range entries {
		if e.Kind != KindStore {
			continue
		}
		var w storeWrite
		if err := json.Unmarshal(e.Payload, &w); err != nil {
			return nil, fmt.Errorf("store entry %d: %w", e.Seq, err)
		}
		values[w.Key] = w.Value
	}
	return &KVStore{values: values}, nil
}

type storeWrite struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

// restore applies a recorded write without appending it again (a resumed
// run replaying its log).
func (s *KVStore) restore(w storeWrite) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.values == nil {
		s.values = map[string]json.RawMessage{}
	}
	s.values[w.Key] = w.Value
}

// snapshot returns a copy of the values (none for a nil store).
func (s *KVStore) snapshot() map[string]json.RawMessage {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.values)
}

// Keys returns the keys that hold a value.
func (s *KVStore) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.values))
	for k := range s.values {
		out = append(out, k)
	}
	return out
}

// StoreGet reads key into a T; ok is false when the key holds nothing.
func StoreGet[T any](s *KVStore, key string) (v T, ok bool, err error) {
	s.mu.Lock()
	raw, ok := s.values[key]
	s.mu.Unlock()
	if !ok {
		return v, false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, true, skilld.Errorf(skilld.EINVALID, "store key %q holds %s, not a %T: %v", key, raw, v, err)
	}
	return v, true, nil
}

// StoreSet writes v at key, appending the write to the task log first.
func StoreSet[T any](ctx context.Context, s *KVStore, key string, v T) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return skilld.Errorf(skilld.EINVALID, "store key %q: %v", key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.persist != nil {
		if err := s.persist(ctx, key, raw); err != nil {
			return err
		}
	}
	if s.values == nil {
		s.values = map[string]json.RawMessage{}
	}
	s.values[key] = raw
	return nil
}
