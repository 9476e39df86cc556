/*
 * render.c — the public API: parse (newline normalization as Jinja2 does it), render from
 * chat messages or from a JSON context, and hand back the text with its caller-data spans.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "template/internal.h"

void dream_template_default_params(struct dream_template_params *p)
{
    memset(p, 0, sizeof(*p));
    p->enable_thinking = DREAM_TEMPLATE_UNSET;
    p->limits.max_depth = 100;
    p->limits.max_loop_iterations = 1000000;
    p->limits.max_output_bytes = (size_t)64 << 20;
    p->limits.max_memory_bytes = (size_t)512 << 20;
}

int dream_template_parse(const char *source, size_t len, dream_template **out)
{
    if (!out || (!source && len))
        return dream_error_set(DREAM_EINVAL, "dream_template_parse: NULL argument");
    *out = NULL;
    if (len > ((size_t)1 << 30))
        return dream_error_set(DREAM_ETOOBIG, "template is %zu bytes; templates up to 1 GiB are accepted", len);
    dream_template *t = calloc(1, sizeof(*t));
    if (!t)
        return dream_error_set(DREAM_ENOMEM, "template: out of memory");
    char *src = tmpl_alloc(&t->arena, len + 1);
    if (!src) {
        dream_template_free(t);
        return DREAM_ENOMEM;
    }
    /* Jinja2 turns \r\n and \r into \n and drops one trailing newline. */
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (source[i] == '\r') {
            src[n++] = '\n';
            if (i + 1 < len && source[i + 1] == '\n')
                i++;
        } else {
            src[n++] = source[i];
        }
    }
    if (n && src[n - 1] == '\n')
        n--;
    src[n] = 0;
    t->src = src;
    t->len = n;
    int rc = tmpl_parse(t);
    if (rc) {
        dream_template_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void dream_template_free(dream_template *t)
{
    if (!t)
        return;
    tmpl_arena_free(&t->arena);
    free(t);
}

void dream_render_free(struct dream_render *r)
{
    if (!r)
        return;
    free(r->text);
    free(r->spans);
    memset(r, 0, sizeof(*r));
}

/* ---- context building ---- */

static int set_var(struct tmpl_rt *rt, const char *name, tval v)
{
    tval key;
    int rc = tmpl_str_new(rt, name, strlen(name), false, &key);
    return rc ? rc : tmpl_dict_set(rt, rt->ctx, key, v);
}

/* Converts JSON into values; every string is caller data. */
static int from_json(struct tmpl_rt *rt, const json_t *j, int depth, tval *out)
{
    int rc;
    if (depth > 256)
        return dream_error_set(DREAM_ETOOBIG, "template context: JSON nested deeper than 256 levels");
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        if ((rc = tmpl_dict_new(rt, json_object_size(j), out)))
            return rc;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)j, k, v)
        {
            tval key, val;
            if ((rc = tmpl_str_new(rt, k, strlen(k), true, &key)) || (rc = from_json(rt, v, depth + 1, &val)) ||
                (rc = tmpl_dict_set(rt, out->u.d, key, val)))
                return rc;
        }
        return 0;
    }
    case JSON_ARRAY:
        if ((rc = tmpl_list_new(rt, json_array_size(j), out)))
            return rc;
        for (size_t i = 0; i < json_array_size(j); i++)
            if ((rc = from_json(rt, json_array_get(j, i), depth + 1, &out->u.l->v[i])))
                return rc;
        return 0;
    case JSON_STRING: return tmpl_str_new(rt, json_string_value(j), json_string_length(j), true, out);
    case JSON_INTEGER: *out = tv_int((int64_t)json_integer_value(j)); return 0;
    case JSON_REAL: *out = tv_float(json_real_value(j)); return 0;
    case JSON_TRUE: *out = tv_bool(true); return 0;
    case JSON_FALSE: *out = tv_bool(false); return 0;
    default: *out = tv_none(); return 0;
    }
}

static int set_params(struct tmpl_rt *rt, const struct dream_template_params *p)
{
    int rc = set_var(rt, "add_generation_prompt", tv_bool(p->add_generation_prompt));
    if (!rc && p->enable_thinking != DREAM_TEMPLATE_UNSET)
        rc = set_var(rt, "enable_thinking", tv_bool(p->enable_thinking != 0));
    tval s;
    if (!rc && p->bos_token && !(rc = tmpl_str_new(rt, p->bos_token, strlen(p->bos_token), false, &s)))
        rc = set_var(rt, "bos_token", s);
    if (!rc && p->eos_token && !(rc = tmpl_str_new(rt, p->eos_token, strlen(p->eos_token), false, &s)))
        rc = set_var(rt, "eos_token", s);
    return rc;
}

static int merge_json(struct tmpl_rt *rt, const json_t *obj)
{
    if (!obj)
        return 0;
    if (!json_is_object(obj))
        return dream_error_set(DREAM_EINVAL, "template context must be a JSON object");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        tval val;
        int rc = from_json(rt, v, 0, &val);
        if (rc || (rc = set_var(rt, k, val)))
            return rc;
    }
    return 0;
}

/* Sets up a render, lets fill() add variables, renders, and moves the output into *out. */
static int render_with(const dream_template *t, const struct dream_template_params *params_in,
                       int (*fill)(struct tmpl_rt *, const void *), const void *arg, struct dream_render *out)
{
    if (!t || !out)
        return dream_error_set(DREAM_EINVAL, "dream_template_render: NULL argument");
    memset(out, 0, sizeof(*out));
    struct dream_template_params params;
    dream_template_default_params(&params);
    if (params_in) {
        struct dream_template_limits d = params.limits;
        params = *params_in;
        if (params.limits.max_depth <= 0)
            params.limits.max_depth = d.max_depth;
        if (params.limits.max_loop_iterations <= 0)
            params.limits.max_loop_iterations = d.max_loop_iterations;
        if (!params.limits.max_output_bytes)
            params.limits.max_output_bytes = d.max_output_bytes;
        if (!params.limits.max_memory_bytes)
            params.limits.max_memory_bytes = d.max_memory_bytes;
    }
    struct tmpl_rt rt;
    memset(&rt, 0, sizeof(rt));
    rt.t = t;
    rt.params = &params;
    rt.arena.limit = params.limits.max_memory_bytes;
    tval ctx;
    struct tmpl_sb sb;
    tmpl_sb_init(&rt, &sb);
    int rc = tmpl_dict_new(&rt, 16, &ctx);
    if (!rc) {
        rt.ctx = ctx.u.d;
        rc = set_params(&rt, &params);
    }
    if (!rc)
        rc = fill(&rt, arg);
    if (!rc)
        rc = tmpl_render(t, &rt, &sb);
    if (!rc) {
        out->len = sb.text.len;
        out->text = dbuf_take(&sb.text);
        out->spans = sb.spans;
        out->n_spans = sb.nspans;
        sb.spans = NULL;
        if (!out->text)
            rc = dream_error_set(DREAM_ENOMEM, "template: out of memory");
    }
    tmpl_sb_free(&sb);
    tmpl_arena_free(&rt.arena);
    if (rc)
        dream_render_free(out);
    return rc;
}

static int fill_json(struct tmpl_rt *rt, const void *arg) { return merge_json(rt, arg); }

int dream_template_render_json(const dream_template *t, const json_t *context,
                               const struct dream_template_params *params, struct dream_render *out)
{
    return render_with(t, params, fill_json, context, out);
}

static int fill_chat(struct tmpl_rt *rt, const void *arg)
{
    const struct dream_chat_input *in = arg;
    tval msgs;
    int rc = tmpl_list_new(rt, in->n_messages, &msgs);
    for (size_t i = 0; !rc && i < in->n_messages; i++) {
        const struct dream_chat_message *m = &in->messages[i];
        tval d, key, role, content = tv_none();
        const char *r = m->role ? m->role : "user";
        if ((rc = tmpl_dict_new(rt, 2, &d)) || (rc = tmpl_str_new(rt, "role", 4, false, &key)) ||
            (rc = tmpl_str_new(rt, r, strlen(r), false, &role)) || (rc = tmpl_dict_set(rt, d.u.d, key, role)))
            break;
        if (m->content && (rc = tmpl_str_new(rt, m->content, strlen(m->content), true, &content)))
            break;
        if ((rc = tmpl_str_new(rt, "content", 7, false, &key)) || (rc = tmpl_dict_set(rt, d.u.d, key, content)))
            break;
        msgs.u.l->v[i] = d;
    }
    if (!rc)
        rc = set_var(rt, "messages", msgs);
    if (!rc)
        rc = merge_json(rt, (const json_t *)in->extra);
    return rc;
}

int dream_template_render(const dream_template *t, const struct dream_chat_input *in, struct dream_render *out)
{
    if (!in || (in->n_messages && !in->messages)) {
        if (out)
            memset(out, 0, sizeof(*out));
        return dream_error_set(DREAM_EINVAL, "dream_template_render: NULL input");
    }
    return render_with(t, &in->params, fill_chat, in, out);
}
