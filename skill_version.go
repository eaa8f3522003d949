package skilld

import "time"

// SkillVersion is one immutable state of a skill: the package it had. An
// edit makes a new version; nothing rewrites an old one.
type SkillVersion struct {
	SkillID   string    `json:"skill_id"`
	Number    int       `json:"number"`
	Digest    string    `json:"digest"`
	Message   string    `json:"message,omitempty"`
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}
