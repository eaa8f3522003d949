package model

import "time"

// Retry describes a model call sent again after a failed attempt. The
// adapters retry inside one Generate (the SDKs' own retries, and
// Anthropic's restarts after an error event), so without being told a
// caller sees nothing until the last attempt's outcome; a terminal or a
// log that shows progress is told of each retry as its attempt starts.
type Retry struct {
	// Provider is the adapter's provider ("openai", "anthropic").
	Provider string
	// Attempt is the attempt starting now (2 for the first retry), of at
	// most Attempts.
	Attempt, Attempts int
	// Status is the failed attempt's HTTP status, 0 when it got no
	// response.
	Status int
	// Reason says what failed, for people ("HTTP 503 Service
	// Unavailable: overloaded", "connection refused"); it never holds the
	// API key.
	Reason string
	// Waited is how long the adapter waited before this attempt.
	Waited time.Duration
}
