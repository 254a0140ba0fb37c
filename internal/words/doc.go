// Package words says numbers and lists in words, the same way in every
// sentence and format pinprobe writes: p-values ("p<1e-9"), rates and
// intervals ("4.5%", "1.2–9.8%"), latencies, lists ("a, b and c", "193
// more"), and strings from outside made safe to print (SafeText,
// Printable). It is a leaf: it imports only the standard library.
package words
