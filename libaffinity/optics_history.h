/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * optics_history - the temperatures root-run reads of the modules recorded,
 * so the next read can carry the earlier ones (RailbindXcvrTempHistory) and
 * the audit's transceiver check can judge a temperature rising across
 * samples. Kept in <root>/run/railbind/optics.json (railbind.optics/1),
 * beside railbindd's counters.json but never in it: railbindd rewrites its
 * file whole from memory, and by design it does not read module EEPROMs
 * (it would need them through CAP_NET_ADMIN; the root audit, snapshot and
 * NHC check read them). Written only where /run/railbind exists (railbindd
 * made it); a file that is absent, not regular, too large or malformed is an
 * empty history, never an error: the trend is then not judged. Private to
 * libaffinity. Functions return 0 or a negative errno.
 */
#ifndef AFF_OPTICS_HISTORY_H
#define AFF_OPTICS_HISTORY_H

#include <json-c/json.h>

#include "optics.h"

#define AFF_OPTICS_HISTORY_FILE "/run/railbind/optics.json"
/* Samples older than this say nothing about today's trend. */
#define AFF_OPTICS_HIST_WINDOW (24LL * 3600)

/* @path's history as a document (an empty one when unreadable); -ENOMEM. */
int aff_optics_history_load(const char *path, struct json_object **doc);
/* The same from @text (NULL: none; the fuzz target's entry). */
int aff_optics_history_parse(const char *text, struct json_object **doc);
/*
 * Give @o (read at @now from @pci's module) the samples @doc keeps for
 * @pci within the window before @now, oldest first, then add @o's own
 * temperature to @doc, keeping the newest AFF_OPTICS_HIST_MAX.
 */
int aff_optics_history_take(struct json_object *doc, const char *pci, long long now,
			    struct aff_optics *o);
/* @doc into @path, whole or not at all. */
int aff_optics_history_save(struct json_object *doc, const char *path, char *err,
			    size_t errlen);

#endif /* AFF_OPTICS_HISTORY_H */
