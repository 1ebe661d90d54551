import xml.etree.ElementTree as ET
import xml.dom.minidom
import xml.sax
import json

NS = {"p": "urn:example:price"}
tree = ET.parse("catalog.xml")
root = tree.getroot()
print(root.tag, root.attrib)
for book in root.iter("book"):
    price = book.find("p:price", NS)
    tags = [t.text for t in book.iterfind("tags/tag")]
    print(book.get("id"), repr(book.findtext("title")), price.text, price.get("currency"), tags)
total = sum(float(p.text) for p in root.findall(".//p:price", NS) if p.get("currency") == "EUR")
print("EUR total:", round(total, 2))

# Streaming, with the events in the order they come.
events = []
for event, item in ET.iterparse("catalog.xml", events=("start", "end", "start-ns")):
    if event == "start-ns":
        events.append(("ns",) + item)
    elif item.tag == "book":
        events.append((event, item.get("id")))
print(events)

# Edit and write back.
for book in root.findall("book"):
    if book.get("lang") == "fr":
        root.remove(book)
ET.SubElement(root, "book", id="bk104").text = "TBD"
ET.indent(tree, space=" ")
print(ET.tostring(root, encoding="unicode")[:220])

# The DOM, and SAX.
dom = xml.dom.minidom.parseString("<a x='1'><b>text</b><b/><!-- c --></a>")
print([n.nodeName for n in dom.documentElement.childNodes], dom.documentElement.getAttribute("x"))
print(dom.toprettyxml(indent="  ").splitlines()[1:4])


class Titles(xml.sax.ContentHandler):
    def __init__(self):
        super().__init__()
        self.titles, self.depth, self.inside = [], 0, False

    def startElement(self, name, attrs):
        self.inside = name == "title"
        if self.inside:
            self.titles.append("")

    def characters(self, content):
        if self.inside:
            self.titles[-1] += content

    def endElement(self, name):
        self.inside = False


handler = Titles()
xml.sax.parse("catalog.xml", handler)
print(handler.titles)

# Errors say where.
for bad in ["<a><b></a>", "<a>&nope;</a>", "<a>", "<a/><b/>", "<a x='1' x='2'/>"]:
    try:
        ET.fromstring(bad)
    except ET.ParseError as error:
        print(json.dumps(bad), "->", error, error.position, error.code)
