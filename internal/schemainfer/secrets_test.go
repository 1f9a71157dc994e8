package schemainfer

import (
	"strings"
	"testing"
)

func TestSecretName(t *testing.T) {
	secret := []string{
		"apiToken", "dbPassword", "db_password", "DB-PASSWORD", "pass_word", "passwd", "userPwd", "pwd2",
		"apiKey", "api_key", "APIKey", "X-Api-Key", "apiKeyHeader", "apikey", "privateKey", "accessKey", "ssh_key", "s3Key", "key", "signingKeys",
		"clientSecret", "AUTH_TOKEN", "authorization", "oauth", "bearer", "jwt", "sessionId", "session-id", "cookie",
		"webhookSignature", "credentials", "awsCreds", "hmacSalt", "otp", "pin", "dsn", "passphrase",
	}
	innocuous := []string{
		"keyboard", "monkey", "turkey", "keyId", "keyName", "author", "authorName", "tokenizer", "passenger", "compass",
		"region", "env", "signed", "pinned", "", "_",
	}
	for _, name := range secret {
		if !secretName(name) {
			t.Errorf("secretName(%q) = false, want true (words %q)", name, wordsOf(name))
		}
	}
	for _, name := range innocuous {
		if secretName(name) {
			t.Errorf("secretName(%q) = true, want false (words %q)", name, wordsOf(name))
		}
	}
}

func TestWordsOf(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"apiToken", "api token"}, {"APIKey", "api key"}, {"db_password", "db password"}, {"X-Api-Key", "x api key"},
		{"pwd2", "pwd 2"}, {"s3Key", "s 3 key"}, {"HTTPServer2Name", "http server 2 name"}, {"passé.Wörd", "passé wörd"},
	} {
		if got := strings.Join(wordsOf(c.name), " "); got != c.want {
			t.Errorf("wordsOf(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSecretValue(t *testing.T) {
	for _, c := range []struct {
		value string
		want  Reason
	}{
		{strings.Repeat("ab", 16), 0},               // 32 characters: not long, and plain
		{strings.Repeat("ab", 16) + "c", LongValue}, // 33
		{"Zx8Qe2LmT4vRk9Wn", RandomValue},           // 16 characters, 4 bits each
		{"Zx8Qe2LmT4vRk9W", 0},                      // 15: too short to tell
		{"9f86d081884c7d65", RandomValue},           // hex, 3.25 bits
		{"f00dfacef00dface", 0},                     // hex, 2.5 bits
		{"0000111122223333", 0},                     // 2 bits
		{"customer-support", 0},                     // 3.25 bits
		{"PENDING_APPROVAL", 0},                     // 3.45 bits
		{"production-database", RandomValue},        // 3.68 bits: a word may look random, and costs only its enum
		{"eu-west-1", 0},
	} {
		if got := secretValue(c.value); got != c.want {
			t.Errorf("secretValue(%q) = %d, want %d (entropy %.2f)", c.value, got, c.want, entropy(c.value))
		}
	}
}
