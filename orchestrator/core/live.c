/* live.c -- live progress table on a terminal, plain lines elsewhere. */
#include "core/live.h"
#include "core/strbuf.h"
#include "core/timeutil.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/banned.h"

struct live_slot {
	char *name;
	char *phase;
	char *what;
	int64_t since_ms;
	int done;
	int changed;        /* for plain mode: print once per change */
};

struct live {
	pthread_mutex_t lock;
	FILE *out;
	int tty;
	int n;
	int drawn_lines;
	int64_t start_ms;
	struct live_slot *s;
};

struct live *live_new(FILE *out, int nslots, int force_plain)
{
	struct live *lv = xcalloc(1, sizeof(*lv));
	pthread_mutex_init(&lv->lock, NULL);
	lv->out = out;
	lv->tty = !force_plain && isatty(fileno(out)) && getenv("TERM") &&
		  strcmp(getenv("TERM"), "dumb");
	lv->n = nslots;
	lv->s = xcalloc((size_t)nslots, sizeof(*lv->s));
	lv->start_ms = time_mono_ms();
	return lv;
}

static void set_str(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? xstrdup(src) : NULL;
}

void live_set_name(struct live *lv, int slot, const char *name)
{
	pthread_mutex_lock(&lv->lock);
	set_str(&lv->s[slot].name, name);
	pthread_mutex_unlock(&lv->lock);
}

void live_set(struct live *lv, int slot, const char *phase, const char *what)
{
	struct live_slot *s = &lv->s[slot];
	pthread_mutex_lock(&lv->lock);
	set_str(&s->phase, phase);
	set_str(&s->what, what);
	s->since_ms = time_mono_ms();
	s->changed = 1;
	pthread_mutex_unlock(&lv->lock);
}

void live_done(struct live *lv, int slot, const char *final)
{
	struct live_slot *s = &lv->s[slot];
	pthread_mutex_lock(&lv->lock);
	set_str(&s->phase, "done");
	set_str(&s->what, final);
	s->since_ms = time_mono_ms();
	s->done = 1;
	s->changed = 1;
	pthread_mutex_unlock(&lv->lock);
}

static void fmt_elapsed(struct strbuf *sb, int64_t ms)
{
	if (ms < 60000)
		strbuf_addf(sb, "%5.1fs", (double)ms / 1000.0);
	else
		strbuf_addf(sb, "%3dm%02ds", (int)(ms / 60000), (int)(ms / 1000 % 60));
}

void live_draw(struct live *lv, int final)
{
	struct strbuf sb = STRBUF_INIT;
	int64_t now = time_mono_ms();
	int i;

	pthread_mutex_lock(&lv->lock);
	if (lv->tty) {
		if (lv->drawn_lines)
			strbuf_addf(&sb, "\033[%dA", lv->drawn_lines);
		for (i = 0; i < lv->n; i++) {
			struct live_slot *s = &lv->s[i];
			strbuf_addstr(&sb, "\033[2K");
			strbuf_addf(&sb, "  %-16.16s %-8.8s ", s->name ? s->name : "?",
				    s->phase ? s->phase : "waiting");
			fmt_elapsed(&sb, s->done ? 0 : now - s->since_ms);
			strbuf_addf(&sb, "  %.90s\n", s->what ? s->what : "");
		}
		lv->drawn_lines = lv->n;
		if (final)
			lv->drawn_lines = 0;
	} else {
		for (i = 0; i < lv->n; i++) {
			struct live_slot *s = &lv->s[i];
			if (!s->changed)
				continue;
			s->changed = 0;
			strbuf_addf(&sb, "[%7.1fs] %s: %s%s%s\n",
				    (double)(now - lv->start_ms) / 1000.0,
				    s->name ? s->name : "?", s->phase ? s->phase : "",
				    s->what ? " " : "", s->what ? s->what : "");
		}
	}
	pthread_mutex_unlock(&lv->lock);
	if (sb.len) {
		fwrite(sb.buf, 1, sb.len, lv->out);
		fflush(lv->out);
	}
	strbuf_release(&sb);
}

void live_free(struct live *lv)
{
	int i;
	if (!lv)
		return;
	for (i = 0; i < lv->n; i++) {
		free(lv->s[i].name);
		free(lv->s[i].phase);
		free(lv->s[i].what);
	}
	free(lv->s);
	pthread_mutex_destroy(&lv->lock);
	free(lv);
}
