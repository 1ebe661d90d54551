// wordcount: a Toolcell plugin in JavaScript with one tool, `count`, that
// counts the lines, words and bytes of a file under its mount.

import { Plugin, Output, schema, fs } from "toolcell";

const plugin = new Plugin();

plugin.tool(
  {
    name: "count",
    title: "Count lines, words and bytes",
    description:
      "Count the lines, words and bytes of a text file, as `wc` does. " +
      "`path` is absolute or relative to the plugin's directory.",
    category: "read",
    readOnly: true,
    openWorld: false,
    input: schema.object({
      path: schema.string("The file to count, absolute or relative to the plugin's directory."),
    }),
    output: schema.object({
      path: schema.string("The file counted, as an absolute path."),
      lines: schema.integer("Newline characters, as `wc -l` counts them."),
      words: schema.integer("Runs of characters other than whitespace."),
      bytes: schema.integer("The size of the file in bytes."),
    }),
  },
  ({ path }) => {
    const absolute = fs.resolve(path);
    const data = fs.readBytes(absolute);
    const text = new TextDecoder().decode(data);
    const counts = {
      path: absolute,
      lines: text.split("\n").length - 1,
      words: text.match(/\S+/g)?.length ?? 0,
      bytes: data.length,
    };
    return Output.structured(
      counts,
      `${counts.lines} lines, ${counts.words} words, ${counts.bytes} bytes in ${absolute}`,
    );
  },
);

export const tools = plugin.exports();
