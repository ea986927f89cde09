/* The HTML report's and the flame graph's style and script: the files under src/output/assets/,
 * embedded at build time by scripts/embed-assets.sh (so they are read, linted and changed as the
 * CSS and JavaScript they are). Plain CSS and ES5 (with classList and bind), no framework, no
 * network. */
#ifndef EBPROF_OUTPUT_ASSETS_H
#define EBPROF_OUTPUT_ASSETS_H

extern const char asset_report_css[];	/* html.c: the report's <style> */
extern const char asset_report_js[];	/* html.c: the report's <script> */
extern const char asset_flame_css[];	/* svg.c: the flame graph's style */
extern const char asset_profile_css[];	/* set.c: the page of a run of several modes */
extern const char asset_profile_js[];
extern const char asset_flame_js[];	/* svg.c: the flame graph's script, after its ebprofFlame
					 * settings */

#endif
