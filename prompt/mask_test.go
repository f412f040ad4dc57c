package prompt

import "testing"

func TestMaskValues(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		text   string
		want   string
	}{
		{"whole value", []string{"hunter22"}, "pw=hunter22.", "pw=***."},
		{"three characters as a token", []string{"Qz7"}, `pin=Qz7 and "Qz7"`, `pin=*** and "***"`},
		{"three characters inside a word stay", []string{"Qz7"}, "xQz7 Qz7x Qz7", "xQz7 Qz7x ***"},
		{"one character at the ends", []string{"7"}, "7 17 7", "*** 17 ***"},
		{"value with spaces whole", []string{"correct horse battery"}, "p: correct horse battery!", "p: ***!"},
		{"value with spaces word by word", []string{"correct horse battery"}, "correct\nhorse\nbattery", "***\n***\n***"},
		{"short words of a long value are not hidden", []string{"my long secret"}, "my name", "my name"},
		{"json escaped form", []string{`a"b\c`}, `{"v":"a\"b\\c"}`, `{"v":"***"}`},
		{"longest first", []string{"abcd", "abcdefgh"}, "abcdefgh abcd", "*** ***"},
		{"blank value ignored", []string{" ", ""}, "a b", "a b"},
		{"utf-8 short value as token", []string{"ñü"}, "x ñü y añü", "x *** y añü"},
		{"value with surrounding blanks", []string{" s3cretvalue "}, "s3cretvalue", "***"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := maskValues(tt.text, tt.values); got != tt.want {
				t.Errorf("maskValues(%q, %q) = %q, want %q", tt.text, tt.values, got, tt.want)
			}
		})
	}
}

func BenchmarkMaskValues(b *testing.B) {
	text := make([]byte, 0, 64<<10)
	for len(text) < 64<<10 {
		text = append(text, "the quick brown fox jumps over the lazy dog 42\n"...)
	}
	vals := []string{"hunter22", "Qz7", "correct horse battery"}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		maskValues(string(text), vals)
	}
}
