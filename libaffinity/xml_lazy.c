// SPDX-License-Identifier: LGPL-2.1-or-later
/* libxml2 through dlopen: see xml_lazy.h for why. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "xml_lazy.h"

/*
 * libxml2 2.x has kept this soname since 2.0; the headers we compile
 * against are of the same major version (LIBXML_VERSION checked below).
 */
#define XML_SONAME "libxml2.so.2"
_Static_assert(LIBXML_VERSION >= 20000 && LIBXML_VERSION < 30000,
	       "libxml2 headers of another major version than " XML_SONAME);

static struct aff_xml xml;
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* dlsym's void * to a function pointer: POSIX guarantees it works. */
#define SYM(h, field, name) \
	(*(void **)&xml.field = dlsym((h), (name))) != NULL

static void load(void)
{
	void *h = dlopen(XML_SONAME, RTLD_LAZY | RTLD_LOCAL);
	int (*mem_get)(xmlFreeFunc *, xmlMallocFunc *, xmlReallocFunc *,
		       xmlStrdupFunc *) = NULL;
	xmlMallocFunc m;
	xmlReallocFunc r;
	xmlStrdupFunc s;

	if (!h) {
		snprintf(load_error, sizeof(load_error), "%s", dlerror());
		return;
	}
	/* xmlFree is a variable, not a function; xmlMemGet reads it. */
	*(void **)&mem_get = dlsym(h, "xmlMemGet");
	if (!(SYM(h, read_file, "xmlReadFile") &&
	      SYM(h, read_memory, "xmlReadMemory") &&
	      SYM(h, free_doc, "xmlFreeDoc") &&
	      SYM(h, root, "xmlDocGetRootElement") &&
	      SYM(h, get_prop, "xmlGetProp") &&
	      SYM(h, has_prop, "xmlHasProp") &&
	      SYM(h, line_no, "xmlGetLineNo") &&
	      SYM(h, last_error, "xmlGetLastError") &&
	      SYM(h, reset_last_error, "xmlResetLastError") &&
	      SYM(h, new_doc, "xmlNewDoc") &&
	      SYM(h, new_doc_node, "xmlNewDocNode") &&
	      SYM(h, new_child, "xmlNewChild") &&
	      SYM(h, new_prop, "xmlNewProp") &&
	      SYM(h, set_root, "xmlDocSetRootElement") &&
	      SYM(h, buffer_create, "xmlBufferCreate") &&
	      SYM(h, buffer_content, "xmlBufferContent") &&
	      SYM(h, buffer_free, "xmlBufferFree") &&
	      SYM(h, node_dump, "xmlNodeDump")) || !mem_get ||
	    mem_get(&xml.free, &m, &r, &s) < 0 || !xml.free) {
		snprintf(load_error, sizeof(load_error),
			 "%s lacks a function railbind uses", XML_SONAME);
		xml.read_file = NULL;
		dlclose(h);
		return;
	}
	/* Kept loaded: its documents may be in use until the process ends. */
}

const struct aff_xml *aff_xml(const char *what, char *err, size_t errlen)
{
	pthread_once(&once, load);
	if (xml.read_file)
		return &xml;
	aff_seterr(err, errlen, ELIBACC,
		   "%s: reading it needs libxml2, which cannot be loaded: %s",
		   what, load_error);
	return NULL;
}
