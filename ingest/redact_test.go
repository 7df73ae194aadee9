package ingest

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Real-looking secrets, built from parts so that secret scanners reading
// this repository do not flag the file.
var (
	ghToken    = "ghp_" + strings.Repeat("aB3d", 9)
	openAIKey  = "sk-proj-" + strings.Repeat("Xy7_", 12)
	claudeKey  = "sk-ant-api03-" + strings.Repeat("Qw9-", 20)
	awsID      = "AKIA" + "IOSFODNN7Q2WXZ4R"
	awsSecret  = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "zQ9kLm2P"
	stripeKey  = "sk_" + "live_" + strings.Repeat("4eC39HqLyjWDarjtT1zdp7dc", 1)
	slackToken = "xoxb-" + "2435-9876-" + strings.Repeat("aZ", 12)
	jwt        = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUifQ." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	npmToken   = "npm_" + strings.Repeat("a1B2", 9)
	glToken    = "glpat-" + strings.Repeat("x9Y8", 5)
	pemKey     = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDmUQ3z0g6mJq+3rZx1A7+cY2q7rJk3\n-----END OPENSSH PRIVATE KEY-----"
)

func TestRedact_RealInputs(t *testing.T) {
	tests := []struct {
		name, in, want string
		gone           []string // must not survive
	}{
		{"curl bearer header",
			`curl -sS -H "Authorization: Bearer ` + jwt + `" https://api.example.com/v1/me`,
			`curl -sS -H "Authorization: Bearer [REDACTED]" https://api.example.com/v1/me`, []string{jwt}},
		{"github token header",
			`curl -H 'Authorization: token ` + ghToken + `' https://api.github.com/user`,
			`curl -H 'Authorization: token [REDACTED]' https://api.github.com/user`, []string{ghToken}},
		{"export of an API key",
			"export OPENAI_API_KEY=" + openAIKey + " && python run.py",
			"export OPENAI_API_KEY=[REDACTED] && python run.py", []string{openAIKey}},
		{"anthropic key alone in an error",
			"Error: invalid x-api-key " + claudeKey + " (401)",
			"Error: invalid x-api-key sk-ant-api03-[REDACTED] (401)", []string{claudeKey}},
		{"git remote with a token",
			"git clone https://oauth2:" + glToken + "@gitlab.com/acme/api.git",
			"git clone https://oauth2:[REDACTED]@gitlab.com/acme/api.git", []string{glToken}},
		{"database URL",
			"psql postgres://app:hunter2@db.internal:5432/prod -c 'select 1'",
			"psql postgres://app:[REDACTED]@db.internal:5432/prod -c 'select 1'", []string{"hunter2"}},
		{"mysql password flag",
			"mysql --password=s3cr3t! -u root app",
			"mysql --password=[REDACTED] -u root app", []string{"s3cr3t!"}},
		{"token flag with a space",
			`gh auth login --with-token --token "` + ghToken + `"`,
			`gh auth login --with-token --token "[REDACTED]"`, []string{ghToken}},
		{"curl user and password",
			"curl -u admin:correct-horse https://registry.local/v2/",
			"curl -u admin:[REDACTED] https://registry.local/v2/", []string{"correct-horse"}},
		{"aws credentials file",
			"[default]\naws_access_key_id = " + awsID + "\naws_secret_access_key = " + awsSecret + "\nregion = eu-west-1",
			"[default]\naws_access_key_id = AKIA[REDACTED]\naws_secret_access_key = [REDACTED]\nregion = eu-west-1", []string{awsID, awsSecret}},
		{"aws key id alone",
			"AccessDenied for " + awsID + " on s3://bucket",
			"AccessDenied for AKIA[REDACTED] on s3://bucket", []string{awsID}},
		{"json settings",
			`{"apiKey": "abc123xyz", "model": "gpt-4o", "clientSecret": 'q1w2e3'}`,
			`{"apiKey": "[REDACTED]", "model": "gpt-4o", "clientSecret": '[REDACTED]'}`, []string{"abc123xyz", "q1w2e3"}},
		{"npmrc",
			"//registry.npmjs.org/:_authToken=" + npmToken,
			"//registry.npmjs.org/:_authToken=[REDACTED]", []string{npmToken}},
		{"query string token",
			"GET https://hooks.example.com/notify?token=Zm9vYmFy&channel=ops",
			"GET https://hooks.example.com/notify?token=[REDACTED]&channel=ops", []string{"Zm9vYmFy"}},
		{"stripe and slack keys in prose",
			"rotate " + stripeKey + " and " + slackToken + " today",
			"rotate sk_live_[REDACTED] and xoxb-[REDACTED] today", []string{stripeKey, slackToken}},
		{"private key block",
			"cat ~/.ssh/id_ed25519 printed:\n" + pemKey + "\ndone",
			"cat ~/.ssh/id_ed25519 printed:\n[REDACTED PRIVATE KEY]\ndone", []string{"b3BlbnNzaC1rZXkt"}},
		{"private key block cut short",
			"key: -----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2",
			"key: [REDACTED PRIVATE KEY]", []string{"MIIEpAIBAAKCAQEA"}},
		{"bare JWT",
			"session cookie was " + jwt,
			"session cookie was [REDACTED]", []string{jwt}},
		{"yaml",
			"db:\n  user: app\n  password: \"p@ss w0rd\"\n  host: localhost",
			"db:\n  user: app\n  password: \"[REDACTED]\"\n  host: localhost", []string{"p@ss w0rd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			for _, s := range tt.gone {
				if strings.Contains(got, s) {
					t.Errorf("%q survived in %q", s, got)
				}
			}
			if again := Redact(got); again != got {
				t.Errorf("not idempotent: %q then %q", got, again)
			}
		})
	}
}

// TestRedact_LeavesOrdinaryText: commands and code that name tokens or
// passwords without holding one stay as they are.
func TestRedact_LeavesOrdinaryText(t *testing.T) {
	for _, s := range []string{
		"go test -race -run TestToken ./index/tokenize/",
		"max_tokens=2000 temperature=0.2",
		"token := lexer.Next()",
		`if token == "" { return }`,
		`grep -rn "password" src/ --include=*.go`,
		"secret_santa: true",
		"the bearer of bad news",
		"git log --author=me --since=2.weeks",
		"sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"id: 123e4567-e89b-12d3-a456-426614174000",
		"https://github.com/ctxd/ctxd/pull/27",
		"mkdir -p build && make -j4",
		"password reset emails go out at 9:00",
		"The Authorization header is missing",
		"read ~/.ssh/config; the RSA PRIVATE KEY is elsewhere",
		"",
	} {
		if got := Redact(s); got != s {
			t.Errorf("Redact(%q) = %q, want it unchanged", s, got)
		}
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{"", "password=x", "Authorization: Bearer abcdefgh1234", "postgres://a:b@c/d",
		"-----BEGIN PRIVATE KEY-----\nabc", "--token 'x y'", `"apiKey": "v"`, "ghp_", jwt, "ключ: значение"} {
		f.Add(s, " ")
	}
	f.Fuzz(func(t *testing.T, s, sep string) {
		out := Redact(s)
		if Redact(out) != out {
			t.Errorf("not idempotent on %q: %q then %q", s, out, Redact(out))
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Errorf("valid UTF-8 %q became invalid: %q", s, out)
		}
		// A secret of known shape, set apart by whitespace, never survives
		// whatever surrounds it.
		if strings.TrimSpace(sep) != "" || sep == "" {
			sep = " "
		}
		for _, secret := range []string{ghToken, openAIKey, awsID, jwt, stripeKey} {
			in := s + sep + secret + sep + s
			if got := Redact(in); strings.Contains(got, secret) {
				t.Errorf("%q survived in Redact(%q) = %q", secret, in, got)
			}
		}
	})
}
