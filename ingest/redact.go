package ingest

import (
	"regexp"
	"slices"
	"strings"
)

// Redacted replaces a secret value that Redact removed.
const Redacted = "[REDACTED]"

// RedactedPrivateKey replaces a whole private key block.
const RedactedPrivateKey = "[REDACTED PRIVATE KEY]"

// redactRule is one kind of secret: words one of which every match
// contains (so that text without them costs a substring scan), and the
// pattern. The secret is submatch 2 when the pattern has two groups, else
// what follows submatch 1 (a prefix that is not secret, such as "ghp_" or
// "password="), else the whole match; it is replaced by with.
type redactRule struct {
	keywords []string // lowercased
	re       *regexp.Regexp
	with     string // Redacted unless set
}

// secretKey ends the name of a setting that holds a secret (DB_PASSWORD,
// accessToken, aws_secret_access_key, client-secret); the rule matches from
// it on, as what comes before it in the name stays anyway. It must end the
// name, since the separator follows it: max_tokens, token_count and
// secret_santa are not secrets.
const secretKey = `(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)`

// quotedOrWord is a value: quoted (the quotes are kept), or up to the next
// space, quote, comma, semicolon or ampersand.
const quotedOrWord = `"[^"\n]*"|'[^'\n]*'|[^\s"',;&]+`

// redactRules are applied in order, so the block and header rules see the
// text before the key=value rule would split their values.
var redactRules = []redactRule{
	// PEM private keys, to the END line or, cut short, to the end of the text.
	{keywords: []string{"private key"}, re: regexp.MustCompile(`-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\z)`),
		with: RedactedPrivateKey},
	// The password of a URL's userinfo: postgres://app:hunter2@db/prod.
	{keywords: []string{"://"}, re: regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]+:)([^/\s@]+)@`)},
	// Authorization headers, with or without a scheme word.
	{keywords: []string{"authorization"}, re: regexp.MustCompile(`(?i)(\bauthorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|apikey)\s+)?)[^\s"',;]{4,}`)},
	// Bearer tokens anywhere.
	{keywords: []string{"bearer"}, re: regexp.MustCompile(`(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}`)},
	// curl -u user:password, --user user:password.
	{keywords: []string{"-u"}, re: regexp.MustCompile(`((?:^|\s)(?:-u|--user)[ =]+[^:\s]+:)[^\s"']+`)},
	// Command-line flags that take a secret: --password x, --token=x.
	{keywords: []string{"--"}, re: regexp.MustCompile(`(?i)(--(?:password|passwd|passphrase|token|secret|api-key|apikey|access-token|auth-token|client-secret)(?:\s+|=))(` + quotedOrWord + `)`)},
	// Settings and variables: DB_PASSWORD=x, "apiKey": "x", token: x. A
	// value may not start with "=", so that code (token := x, token == x)
	// is left alone.
	{keywords: []string{"pass", "secret", "token", "key", "credential"}, re: regexp.MustCompile(`(?i)(` + secretKey + `["']?\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|[^\s"',;&=][^\s"',;&]*)`)},
	// Keys with a recognisable shape need no name in front of them; the
	// prefix that names their kind is kept.
	{keywords: []string{"sk-"}, re: regexp.MustCompile(`\b(sk-(?:proj-|ant-(?:api|admin)\d\d-|svcacct-|admin-)?)[A-Za-z0-9_-]{20,}`)},
	{keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, re: regexp.MustCompile(`\b(gh[pousr]_)[A-Za-z0-9]{36,}`)},
	{keywords: []string{"github_pat_"}, re: regexp.MustCompile(`\b(github_pat_)[A-Za-z0-9_]{22,}`)},
	{keywords: []string{"glpat-"}, re: regexp.MustCompile(`\b(glpat-)[A-Za-z0-9_-]{20,}`)},
	{keywords: []string{"akia", "asia", "abia", "acca"}, re: regexp.MustCompile(`\b(AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{keywords: []string{"xox"}, re: regexp.MustCompile(`\b(xox[abposr]-)[A-Za-z0-9-]{10,}`)},
	{keywords: []string{"aiza"}, re: regexp.MustCompile(`\b(AIza)[0-9A-Za-z_-]{35}`)},
	{keywords: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_"}, re: regexp.MustCompile(`\b([rs]k_(?:live|test)_)[A-Za-z0-9]{16,}`)},
	{keywords: []string{"npm_"}, re: regexp.MustCompile(`\b(npm_)[A-Za-z0-9]{36}\b`)},
	{keywords: []string{"hf_"}, re: regexp.MustCompile(`\b(hf_)[A-Za-z0-9]{30,}\b`)},
	{keywords: []string{"pypi-"}, re: regexp.MustCompile(`\b(pypi-)AgE[A-Za-z0-9_-]{50,}`)},
	{keywords: []string{"hooks.slack.com"}, re: regexp.MustCompile(`(hooks\.slack\.com/services/)[A-Za-z0-9/]+`)},
	// JSON Web Tokens: header.payload.signature, both JSON parts base64url.
	{keywords: []string{"eyj"}, re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
}

// apply returns s with every match of r rewritten.
func (r redactRule) apply(s string) string {
	matches := r.re.FindAllStringSubmatchIndex(s, -1)
	if matches == nil {
		return s
	}
	with := r.with
	if with == "" {
		with = Redacted
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, m := range matches {
		lo, hi := m[0], m[1] // the secret's span
		switch len(m) / 2 {
		case 1:
		case 2:
			lo = m[3]
		default:
			lo, hi = m[4], m[5]
		}
		if v := s[lo:hi]; len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			lo, hi = lo+1, hi-1 // keep a quoted value's quotes
		}
		b.WriteString(s[last:lo])
		b.WriteString(with)
		last = hi
	}
	b.WriteString(s[last:])
	return b.String()
}

// Redact returns s with the secrets it recognises replaced by Redacted, so
// that text recorded from an agent's work (a command it ran, an error it
// met, a prompt) keeps its meaning without the credentials in it. It is
// the text counterpart of SecretReason, which refuses secret files by name;
// `ctxd hook claude-code` applies both to what it records, and Redact is
// exported so that the daemon can apply it to every session event it
// stores.
//
// What it recognises:
//   - PEM private key blocks (BEGIN … PRIVATE KEY … END), whole; a block
//     cut short is redacted to the end of the text;
//   - the password of a URL (scheme://user:password@host);
//   - Authorization headers, bearer tokens, curl's -u/--user user:password,
//     and flags such as --password, --token, --api-key, --client-secret;
//   - values of settings and variables whose name ends in password,
//     passwd, passphrase, secret, token, api_key/apikey, access_key,
//     private_key or credential(s), in any case, assigned with = or :
//     (DB_PASSWORD=…, "apiKey": "…", export GITHUB_TOKEN=…); a value
//     starting with "=" is not one (token == x, token := x);
//   - keys of known shape: OpenAI and Anthropic (sk-…), GitHub (ghp_,
//     gho_, ghu_, ghs_, ghr_, github_pat_), GitLab (glpat-), AWS access key
//     ids (AKIA…), Slack (xox…-, webhook URLs), Google (AIza…), Stripe
//     (sk_live_, rk_test_, …), npm (npm_), Hugging Face (hf_), PyPI
//     (pypi-AgE…), and JSON Web Tokens.
//
// The non-secret part that names a value stays (password=[REDACTED],
// ghp_[REDACTED], Bearer [REDACTED]), so a reader still sees what was
// used. It is deliberately conservative: it does not guess at
// high-entropy strings, which would redact hashes and ids. Redact is
// idempotent and linear in the length of s (Go's regexp); a rule runs only
// when s contains one of its keywords.
func Redact(s string) string {
	lower := strings.ToLower(s)
	for _, r := range redactRules {
		if !slices.ContainsFunc(r.keywords, func(k string) bool { return strings.Contains(lower, k) }) {
			continue
		}
		if out := r.apply(s); out != s {
			s, lower = out, strings.ToLower(out)
		}
	}
	return s
}
