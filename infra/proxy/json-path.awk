# Prints the string at a path of a JSON document read from stdin, e.g.
#   awk -v path=Networks.0.IPv4Addresses.0 -f json-path.awk < metadata.json
# (object keys and array indexes joined by dots); exits 1 when the path holds no string, 2 when
# the input is not JSON. The proxy's start script reads the task metadata with it
# (infra/constructs/app-routing.ts): Caddy's image is Alpine with BusyBox, which has awk but no
# jq. It tokenizes by JSON's grammar (RFC 8259: strings with their escapes, numbers and literals,
# the six structural characters) and walks the tokens keeping the path, so spacing, line breaks,
# key order and nesting do not matter. Written for BusyBox awk and POSIX awk alike.

{ doc = doc $0 "\n" }

END {
	n = 0; i = 1; size = length(doc)
	while (i <= size) {
		c = substr(doc, i, 1)
		if (c == " " || c == "\t" || c == "\r" || c == "\n") { i++; continue }
		if (c == "\"") {
			text = ""; i++
			while (i <= size && (c = substr(doc, i, 1)) != "\"") {
				if (c == "\\") { text = text c substr(doc, i + 1, 1); i += 2 } else { text = text c; i++ }
			}
			if (i > size) exit 2
			token[++n] = "s" text; i++
			continue
		}
		if (index("{}[]:,", c) > 0) { token[++n] = c; i++; continue }
		j = i
		while (j <= size && substr(doc, j, 1) ~ /[-+.0-9A-Za-z]/) j++
		if (j == i) exit 2
		token[++n] = "v" substr(doc, i, j - i); i = j
	}

	depth = 0
	for (k = 1; k <= n; k++) {
		t = token[k]
		if (t == "{" || t == "[") { depth++; kind[depth] = t; index_[depth] = 0; key[depth] = ""; wantKey[depth] = (t == "{"); continue }
		if (t == "}" || t == "]") { if (depth == 0) exit 2; depth--; continue }
		if (t == ",") { if (kind[depth] == "[") index_[depth]++; else wantKey[depth] = 1; continue }
		if (t == ":") { wantKey[depth] = 0; continue }
		if (kind[depth] == "{" && wantKey[depth]) { key[depth] = substr(t, 2); continue }
		if (substr(t, 1, 1) == "s" && here() == path) { print substr(t, 2); exit 0 }
	}
	exit 1
}

function here(   at, d) {
	at = ""
	for (d = 1; d <= depth; d++) at = at (d > 1 ? "." : "") (kind[d] == "[" ? index_[d] : key[d])
	return at
}
