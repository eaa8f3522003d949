// Package analytics reads task logs for what happened to each attached
// skill: how the catalog offered it, whether the model (or the user)
// activated it, what refused or unloaded it, and how the task ended. It is
// pure: a task's snapshot skills and log entries in, one TaskSkill per
// skill out. The service stores these per task (store.SkillUsage) and sums
// them per skill (Summarize).
package analytics

import (
	"github.com/skilld/skilld/agent"
	"github.com/skilld/skilld/store"
)

// How a task's catalog offered a skill to the model. The first three are
// offers (the model saw the skill's name); the others are not.
const (
	// OfferFull: its name, whole description and file list.
	OfferFull = "full"
	// OfferShortened: its entry lost its file list or description text
	// to fit the catalog's budget.
	OfferShortened = "shortened"
	// OfferNameOnly: its name alone.
	OfferNameOnly = "name_only"
	// OfferUnlisted: the catalog could not list every name and left this
	// one out (search_skills still finds it).
	OfferUnlisted = "unlisted"
	// OfferWithheld: the install policy kept the skill out of the run.
	OfferWithheld = "withheld"
	// OfferHidden: the model is not offered the skill at all: it may be
	// activated by the user only (disable-model-invocation), or the tool
	// policy denies activate_skill.
	OfferHidden = "hidden"
)

// Offers lists every offer level, most offered first.
func Offers() []string {
	return []string{OfferFull, OfferShortened, OfferNameOnly, OfferUnlisted, OfferWithheld, OfferHidden}
}

// Offered reports whether offer is one the model saw the skill's name in.
func Offered(offer string) bool {
	return offer == OfferFull || offer == OfferShortened || offer == OfferNameOnly
}

// How a task ended. OutcomeUnfinished is a log without its end (the
// service records the task's own status in its place).
const (
	OutcomeCompleted  = "completed"
	OutcomeFailed     = "failed"
	OutcomeCancelled  = "cancelled"
	OutcomeUnfinished = "unfinished"
)

// OutcomeNames lists the outcomes of finished tasks.
func OutcomeNames() []string { return []string{OutcomeCompleted, OutcomeFailed, OutcomeCancelled} }

// Skill is one skill of a task's snapshot, as the run saw it.
type Skill struct {
	agent.Skill
	Version int
}

// TaskSkill is what one task did with one attached skill: the part of a
// stored row (store.SkillUsage) its log says.
type TaskSkill = store.SkillUse
