package lint

// Severity says how much a finding matters: errors and warnings make
// skilld lint fail, infos do not.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

func (s Severity) rank() int {
	switch s {
	case Error:
		return 2
	case Warning:
		return 1
	}
	return 0
}

// Rule is one check: its ID (what findings and SARIF name it by), its
// severity, and a one-line summary of what it finds.
type Rule struct {
	ID       string
	Severity Severity
	Summary  string
	check    func(*skill) []Finding
}

// Finding is one problem a rule found. File is the path in the package
// ("SKILL.md", "scripts/run.sh"), "" for the skill as a whole; Line is
// 1-based, 0 when the finding is about a whole file.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	File     string   `json:"file,omitempty"`
	Line     int      `json:"line,omitempty"`
	Message  string   `json:"message"`
}

// Rule IDs.
const (
	ruleInvalid          = "skill-invalid"
	ruleNameFolder       = "name-folder-mismatch"
	ruleDescShort        = "description-short"
	ruleDescVague        = "description-vague"
	ruleDescNoTrigger    = "description-no-trigger"
	ruleDescPlaceholder  = "description-placeholder"
	ruleDescCatalog      = "description-catalog-budget"
	ruleBodyLong         = "body-too-long"
	ruleRefDepth         = "reference-depth"
	ruleRefBroken        = "reference-broken"
	ruleUnreferenced     = "unreferenced-file"
	ruleScriptShebang    = "script-shebang"
	ruleScriptExecutable = "script-not-executable"
	ruleClaudeArguments  = "claude-arguments"
	ruleClaudeCommand    = "claude-command-preprocessing"
)

// Rules lists every rule in the order findings of one line are reported.
// skill-invalid has no check of its own: Check reports it when SKILL.md
// is missing or breaks the specification.
func Rules() []Rule {
	return []Rule{
		{ruleInvalid, Error, "SKILL.md is missing or breaks the Agent Skills specification (what skilld validate reports)", nil},
		{ruleNameFolder, Error, "the skill's name differs from the name of the folder that holds it", checkNameFolder},
		{ruleDescShort, Warning, "the description is shorter than 40 characters: too little for a model to choose the skill by", checkDescShort},
		{ruleDescVague, Warning, "the description is made of generic words only (helper, utility, tasks, things…)", checkDescVague},
		{ruleDescNoTrigger, Warning, "the description does not say when to use the skill (\"Use when…\", \"when the user…\")", checkDescNoTrigger},
		{ruleDescPlaceholder, Warning, "the description is a placeholder (TODO, TBD, FIXME, placeholder)", checkDescPlaceholder},
		{ruleDescCatalog, Warning, "the description would be cut in the catalog of a 20-skill agent at 128k-token windows and above", checkDescCatalog},
		{ruleBodyLong, Warning, "the SKILL.md body is over 5,000 tokens: activations in common windows get a summary instead", checkBodyLong},
		{ruleRefBroken, Warning, "a link names a file the package does not hold, or a path is written in another case than the file's", checkRefBroken},
		{ruleRefDepth, Warning, "a document SKILL.md references references further documents SKILL.md does not: more than one level deep", checkRefDepth},
		{ruleUnreferenced, Warning, "a file of the package is mentioned neither in SKILL.md nor in a document it references", checkUnreferenced},
		{ruleScriptShebang, Warning, "a script under scripts/ has no #! line and SKILL.md never runs it with an interpreter", checkScriptShebang},
		{ruleScriptExecutable, Warning, "a script under scripts/ is not executable and SKILL.md never runs it with an interpreter", checkScriptExecutable},
		{ruleClaudeArguments, Info, "SKILL.md uses $ARGUMENTS, which only Claude Code substitutes", checkClaudeArguments},
		{ruleClaudeCommand, Info, "a line starts with !`command`, which only Claude Code runs before loading the skill", checkClaudeCommand},
	}
}
