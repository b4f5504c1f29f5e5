/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libxml2, loaded on first use. Only an NCCL topology file, or an hwloc file
 * hwloc refused (for the line where it stops being XML), needs it; linking
 * it would make every program using libaffinity (railbind run, a rank
 * asking the broker) load libxml2 with ICU and libstdc++ at exec: most of
 * the start-up time of `railbind run` (bench/broker.sh).
 */
#ifndef RAILBIND_XML_LAZY_H
#define RAILBIND_XML_LAZY_H

#include <stddef.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

struct aff_xml {
	xmlDocPtr (*read_file)(const char *path, const char *encoding,
			       int options);
	xmlDocPtr (*read_memory)(const char *buf, int size, const char *url,
				 const char *encoding, int options);
	void (*free_doc)(xmlDocPtr doc);
	xmlNodePtr (*root)(const xmlDoc *doc);
	xmlChar *(*get_prop)(const xmlNode *node, const xmlChar *name);
	xmlAttrPtr (*has_prop)(const xmlNode *node, const xmlChar *name);
	long (*line_no)(const xmlNode *node);
	xmlErrorPtr (*last_error)(void);
	void (*reset_last_error)(void);
	/* What frees the strings get_prop returns. */
	xmlFreeFunc free;
	/* Writing (railbind nccl-topo). */
	xmlDocPtr (*new_doc)(const xmlChar *version);
	xmlNodePtr (*new_doc_node)(xmlDocPtr doc, xmlNsPtr ns,
				   const xmlChar *name, const xmlChar *content);
	xmlNodePtr (*new_child)(xmlNodePtr parent, xmlNsPtr ns,
				const xmlChar *name, const xmlChar *content);
	xmlAttrPtr (*new_prop)(xmlNodePtr node, const xmlChar *name,
			       const xmlChar *value);
	xmlNodePtr (*set_root)(xmlDocPtr doc, xmlNodePtr root);
	xmlBufferPtr (*buffer_create)(void);
	const xmlChar *(*buffer_content)(const xmlBuffer *buf);
	void (*buffer_free)(xmlBufferPtr buf);
	int (*node_dump)(xmlBufferPtr buf, xmlDocPtr doc, xmlNodePtr node,
			 int level, int format);
};

/*
 * aff_xml - libxml2's entry points, loading the library on the first call
 * (thread-safe). NULL with err set ("what: libxml2 ...") when it cannot be
 * loaded; @what names the file that needed it.
 */
const struct aff_xml *aff_xml(const char *what, char *err, size_t errlen);

/* After a successful aff_xml(): the same, without the error text. */
static inline const struct aff_xml *aff_xml_loaded(void)
{
	return aff_xml(NULL, NULL, 0);
}

#endif
