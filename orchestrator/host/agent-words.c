/* agent-words.c -- gpuorch-agent's plan tokenizer: plan.sh is read as data,
 * never sourced. A line is NAME WORD...; a word is bare characters and
 * single-quoted parts ('...', a ' inside written '\'' as
 * strbuf_add_shell_quoted writes it), glued together; a quoted part may
 * span lines; "#" at a word's start comments out the rest of the line.
 * Anything else (unquoted shell syntax: $ ; & | < > ( ) ` " * ? and the
 * like, an unterminated quote) refuses the plan. */
#include "agent.h"

#include <stdlib.h>
#include <string.h>

static int bare_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("_./:=+,@%#-", c));
}

static void push(struct words *w, struct sb *word)
{
	w->w = xrealloc(w->w, (size_t)(w->n + 1) * sizeof(*w->w));
	sb_add(word, "", 0);
	w->w[w->n++] = word->buf;
	word->buf = NULL;
	word->len = word->cap = 0;
}

void words_free(struct words *w)
{
	int i;
	for (i = 0; i < w->n; i++)
		free(w->w[i]);
	free(w->w);
	w->w = NULL;
	w->n = 0;
}

/* one_word: the word at *POS into W; -1 with ERR on a bad one */
static int one_word(const char *t, size_t *pos, int *line, struct sb *w, struct sb *err)
{
	int at = *line;
	while (t[*pos] && t[*pos] != ' ' && t[*pos] != '\t' && t[*pos] != '\n') {
		char c = t[*pos];
		if (c == '\'') {
			const char *end = strchr(t + *pos + 1, '\'');
			size_t k;
			if (!end) {
				sb_addf(err, "line %d: an unterminated quote", at);
				return -1;
			}
			for (k = *pos + 1; t + k < end; k++)
				*line += t[k] == '\n';
			sb_add(w, t + *pos + 1, (size_t)(end - (t + *pos + 1)));
			*pos = (size_t)(end - t) + 1;
		} else if (c == '\\' && t[*pos + 1] && t[*pos + 1] != '\n') {
			sb_add(w, t + *pos + 1, 1);
			*pos += 2;
		} else if (bare_char(c)) {
			sb_add(w, &c, 1);
			*pos += 1;
		} else {
			sb_addf(err, "line %d: the character '%c' outside quotes is not a plan word", at, c);
			return -1;
		}
	}
	sb_add(w, "", 0);
	return 0;
}

int next_command(const char *t, size_t *pos, int *line, struct words *out, struct sb *err)
{
	struct sb w = { 0 };

	out->w = NULL;
	out->n = 0;
	for (;;) {
		while (t[*pos] == ' ' || t[*pos] == '\t')
			(*pos)++;
		if (!t[*pos])
			return out->n > 0;
		if (t[*pos] == '\n') {
			(*pos)++;
			(*line)++;
			if (out->n)
				return 1;
			continue;
		}
		if (t[*pos] == '#') {
			while (t[*pos] && t[*pos] != '\n')
				(*pos)++;
			continue;
		}
		if (one_word(t, pos, line, &w, err) < 0) {
			sb_free(&w);
			words_free(out);
			return -1;
		}
		push(out, &w);
	}
}
