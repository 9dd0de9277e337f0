# html.mk - the HTML report's viewer (cli/html/viewer.js, viewer.css) as C
# strings in build/gen/cli/html/assets.h, made with od and sed (no new tool).
HTML_ASSETS := cli/html/viewer.js cli/html/viewer.css

$(BUILD)/gen/cli/html/assets.h: $(HTML_ASSETS) mk/html.mk
	@mkdir -p $(dir $@)
	@{ echo '/* generated from cli/html/viewer.{js,css} by mk/html.mk */'; \
	  for f in $(HTML_ASSETS); do \
	    n=cli_html_$$(basename $$f | tr . _); \
	    echo "static const char $$n[] = {"; \
	    od -An -v -tx1 $$f | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	    echo '0x00 };'; \
	  done; } > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/cli/html/page.o: $(BUILD)/gen/cli/html/assets.h
