package schemainfer

import (
	"math"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The rules for a value that could be a secret: longer than MaxEnumLength characters (a UUID, a
// hash in hex, an API key, a JWT, a URL that may hold credentials), or random-looking: at least
// MinRandomLength characters with a Shannon entropy per character of at least RandomBits, or of
// HexRandomBits when every character is a hex digit (an alphabet that carries at most 4 bits).
// Most random alphanumeric tokens of 16 characters and nearly all of 20 pass RandomBits, while
// words and slugs rarely do ("customer-support" 3.25, "PENDING_APPROVAL" 3.45); a short secret
// under a plain name is caught by neither: that is why enums are off unless asked for.
const (
	MaxEnumLength   = 32
	MinRandomLength = 16
	RandomBits      = 3.5
	HexRandomBits   = 3.0
)

// secretValue is why a string could be a secret (LongValue, RandomValue), 0 when it could not.
func secretValue(s string) Reason {
	switch n := utf8.RuneCountInString(s); {
	case n > MaxEnumLength:
		return LongValue
	case n >= MinRandomLength && entropy(s) >= randomBits(s):
		return RandomValue
	}
	return 0
}

func randomBits(s string) float64 {
	if strings.Trim(s, "0123456789abcdefABCDEF") == "" {
		return HexRandomBits
	}
	return RandomBits
}

// entropy is the Shannon entropy of s per character, in bits.
func entropy(s string) float64 {
	counts := map[rune]int{}
	for _, r := range s {
		counts[r]++
	}
	n := float64(utf8.RuneCountInString(s))
	bits := 0.0
	for _, c := range counts {
		p := float64(c) / n
		bits -= p * math.Log2(p)
	}
	return bits
}

// secretWords are the words that make a name read as a secret's, wherever they are in it: as one
// word (dbPassword, auth_token), or as two joined (pass_word, api_key, privateKey).
var secretWords = map[string]bool{
	"password": true, "passwords": true, "passwd": true, "pwd": true, "pass": true, "passphrase": true, "passcode": true,
	"secret": true, "secrets": true, "token": true, "tokens": true, "apikey": true, "apikeys": true,
	"accesskey": true, "privatekey": true, "secretkey": true, "privkey": true,
	"credential": true, "credentials": true, "cred": true, "creds": true,
	"auth": true, "oauth": true, "authorization": true, "bearer": true, "jwt": true,
	"session": true, "sessions": true, "cookie": true, "cookies": true,
	"signature": true, "sig": true, "hmac": true, "salt": true, "otp": true, "pin": true, "dsn": true,
}

// secretName reports whether a property's name reads as a secret's. The name is cut into words at
// every character that is neither a letter nor a digit, where a lowercase letter meets a capital
// (apiKey), before the capital that starts a word after an acronym (APIKey), and where letters
// meet digits (pwd2); then it reads as a secret's when a word, or two neighbours joined, is one of
// secretWords, or when its last word is "key" or "keys" (privateKey, ssh_key, key). Whole words
// only: keyboard, monkey, author, tokenizer and passenger are not secrets.
func secretName(name string) bool {
	words := wordsOf(name)
	for i, w := range words {
		if secretWords[w] || i > 0 && secretWords[words[i-1]+w] {
			return true
		}
	}
	last := len(words) - 1
	return last >= 0 && (words[last] == "key" || words[last] == "keys")
}

var wordBreaks = []*regexp.Regexp{
	regexp.MustCompile(`(\p{Ll})(\p{Lu})`),
	regexp.MustCompile(`(\p{Lu})(\p{Lu}\p{Ll})`),
	regexp.MustCompile(`(\pL)(\pN)`),
	regexp.MustCompile(`(\pN)(\pL)`),
}

// wordsOf cuts a name into its words, in lowercase (see secretName).
func wordsOf(name string) []string {
	for _, b := range wordBreaks {
		name = b.ReplaceAllString(name, "$1 $2")
	}
	return strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}
