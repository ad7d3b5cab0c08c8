package places

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Fold is the form names are compared in: lower case, accents and other
// combining marks removed (São Paulo → sao paulo, München → munchen),
// letters that decompose into no base letter spelled out (ß → ss, ø → o,
// æ → ae, ł → l), hyphens, dots, apostrophes and other punctuation read as
// a space, and runs of spaces collapsed. Native scripts are kept as they
// are (東京, Москва), lower-cased where the script has case.
func Fold(s string) string {
	if f, ok := foldASCII(s); ok {
		return f
	}
	var b strings.Builder
	b.Grow(len(s))
	space := true // drop leading spaces
	for _, r := range norm.NFD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		if rep, ok := foldSpecial[r]; ok {
			b.WriteString(rep)
			space = false
			continue
		}
		switch {
		case r == '\'' || r == '’' || r == '`' || r == 'ʻ' || r == 'ʼ':
			continue // d'Ivoire → divoire, O'ahu → oahu: read whether or not it was typed
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
			space = false
		default:
			if !space {
				b.WriteByte(' ')
				space = true
			}
		}
	}
	return strings.TrimRight(b.String(), " ")
}

var foldSpecial = map[rune]string{
	'ß': "ss", 'ẞ': "ss", 'ø': "o", 'Ø': "o", 'æ': "ae", 'Æ': "ae", 'œ': "oe", 'Œ': "oe",
	'đ': "d", 'Đ': "d", 'ð': "d", 'Ð': "d", 'ł': "l", 'Ł': "l", 'ı': "i", 'þ': "th", 'Þ': "th",
	'ħ': "h", 'Ħ': "h",
}

// foldASCII is Fold for the common case, a name in ASCII letters: no
// decomposition needed. ok is false when s has other characters.
func foldASCII(s string) (string, bool) {
	buf := make([]byte, 0, len(s))
	space := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80:
			return "", false
		case c == '\'' || c == '`':
			continue
		case 'A' <= c && c <= 'Z':
			buf = append(buf, c+'a'-'A')
			space = false
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			buf = append(buf, c)
			space = false
		default:
			if !space {
				buf = append(buf, ' ')
				space = true
			}
		}
	}
	for len(buf) > 0 && buf[len(buf)-1] == ' ' {
		buf = buf[:len(buf)-1]
	}
	return string(buf), true
}
