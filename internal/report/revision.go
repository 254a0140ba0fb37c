package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Revision is the revision of pinprobe.report/v1 this pinprobe writes. A
// revision only adds fields (and values of the fields it adds), so a reader of
// revision N reads every file of N or older exactly, and a newer one without
// what came after N; a report without "revision" is of revision 1. README.md
// says what each revision added.
const Revision = 3

// Rev is a document's revision as it says it: 0 when it says none (then
// it is of revision 1); a "revision" it gives must be a whole number from
// 1.
type Rev int

// UnmarshalJSON refuses a revision that is not a whole number from 1.
func (r *Rev) UnmarshalJSON(b []byte) error {
	n, err := strconv.Atoi(string(b))
	if err != nil || n < 1 {
		return fmt.Errorf("revision %.20s: want a whole number from 1", Shown(string(b)))
	}
	*r = Rev(n)
	return nil
}

// RevisionOf is the revision a report says it is of: 1 when it says none.
func RevisionOf(r Rev) int { return max(int(r), 1) }

// maxUnknownNamed is how many fields of a newer revision a note names; it
// counts the rest.
const maxUnknownNamed = 8

// pruneUnknown copies data, one JSON document of type t, leaving out every
// object member t does not have (by JSON name, matched as encoding/json does),
// and returns their paths ("endpoints[].tcp_rtt_ms", the first maxUnknownNamed)
// and count. What follows the document, or is not JSON, is copied for the
// decoder to refuse. It reads each value once and recurses only as deep as the
// document nests, which checkHead has bounded.
func pruneUnknown(data []byte, t reflect.Type) (out []byte, paths []string, count int, err error) {
	p := pruner{dec: json.NewDecoder(bytes.NewReader(data)), seen: map[string]bool{}}
	p.dec.UseNumber()
	if err := p.value(t, "", true); err != nil {
		return nil, nil, 0, err
	}
	p.out.Write(data[p.dec.InputOffset():])
	return p.out.Bytes(), p.paths, p.count, nil
}

type pruner struct {
	dec   *json.Decoder
	out   bytes.Buffer
	paths []string
	seen  map[string]bool
	count int
}

// value copies the next value, of type t (nil: any value, copied whole),
// at path; without keep, it only reads it.
func (p *pruner) value(t reflect.Type, path string, keep bool) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := p.dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		if keep {
			p.scalar(tok)
		}
		return nil
	}
	if !keep {
		return p.skip()
	}
	switch d {
	case '{':
		p.out.WriteByte('{')
		fields, elem := objectFields(t)
		first := true
		for p.dec.More() {
			kt, err := p.dec.Token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			var ft reflect.Type
			known := true
			switch {
			case fields != nil:
				ft, known = fieldOf(fields, key)
			case elem != nil:
				ft = elem
			}
			if !known {
				p.unknown(path, key)
				if err := p.value(nil, "", false); err != nil {
					return err
				}
				continue
			}
			if !first {
				p.out.WriteByte(',')
			}
			first = false
			p.string(key)
			p.out.WriteByte(':')
			if err := p.value(ft, join(path, key), true); err != nil {
				return err
			}
		}
		if _, err := p.dec.Token(); err != nil {
			return err
		}
		p.out.WriteByte('}')
	case '[':
		p.out.WriteByte('[')
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; p.dec.More(); i++ {
			if i > 0 {
				p.out.WriteByte(',')
			}
			if err := p.value(elem, path+"[]", true); err != nil {
				return err
			}
		}
		if _, err := p.dec.Token(); err != nil {
			return err
		}
		p.out.WriteByte(']')
	}
	return nil
}

// skip reads the rest of the object or array whose opening was read.
func (p *pruner) skip() error {
	for depth := 1; depth > 0; {
		tok, err := p.dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

// scalar writes a string, number, boolean or null as it was read.
func (p *pruner) scalar(tok json.Token) {
	switch v := tok.(type) {
	case string:
		p.string(v)
	case json.Number:
		p.out.WriteString(v.String())
	case bool:
		fmt.Fprint(&p.out, v)
	case nil:
		p.out.WriteString("null")
	}
}

func (p *pruner) string(s string) {
	b, _ := json.Marshal(s)
	p.out.Write(b)
}

// unknown notes the member key of the object at path as left out.
func (p *pruner) unknown(path, key string) {
	p.count++
	name := join(path, Shown(key))
	if !p.seen[name] && len(p.paths) < maxUnknownNamed {
		p.seen[name] = true
		p.paths = append(p.paths, name)
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// objectFields says what members a JSON object of type t may have: a
// struct's fields by JSON name (fields), or, for a map, the type of every
// member (elem); both nil when t says nothing (any member is kept).
func objectFields(t reflect.Type) (fields map[string]reflect.Type, elem reflect.Type) {
	switch {
	case t == nil:
		return nil, nil
	case t.Kind() == reflect.Map:
		return nil, t.Elem()
	case t.Kind() == reflect.Struct:
		if f, ok := structFields.Load(t); ok {
			return f.(map[string]reflect.Type), nil
		}
		f := map[string]reflect.Type{}
		addFields(f, t)
		structFields.Store(t, f)
		return f, nil
	}
	return nil, nil
}

// fieldOf is the field of fields that encoding/json decodes key into:
// the one of that name, else one whose name differs only in case.
func fieldOf(fields map[string]reflect.Type, key string) (reflect.Type, bool) {
	if t, ok := fields[key]; ok {
		return t, true
	}
	for name, t := range fields {
		if strings.EqualFold(name, key) {
			return t, true
		}
	}
	return nil, false
}

// structFields caches objectFields of struct types.
var structFields sync.Map

// addFields adds the JSON members of struct t to f, those of embedded
// structs without a name of their own as encoding/json promotes them.
func addFields(f map[string]reflect.Type, t reflect.Type) {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case tag == "-":
		case sf.Anonymous && name == "" && sf.Type.Kind() == reflect.Struct:
			addFields(f, sf.Type)
		case sf.IsExported():
			if name == "" {
				name = sf.Name
			}
			f[name] = sf.Type
		}
	}
}

// newerNote says what reading a report of a newer revision left out.
func newerNote(name string, rev int, paths []string, count int) string {
	s := fmt.Sprintf("%s was written by a newer pinprobe (report revision %d; this one reads revision %d and older): ", name, rev, Revision)
	switch {
	case count == 0:
		return s + "every field it holds is known here"
	case count > len(paths):
		return s + fmt.Sprintf("%d fields it does not know were left out (%s, …)", count, strings.Join(paths, ", "))
	case count == 1:
		return s + "1 field it does not know was left out (" + paths[0] + ")"
	}
	return s + fmt.Sprintf("%d fields it does not know were left out (%s)", count, strings.Join(paths, ", "))
}
