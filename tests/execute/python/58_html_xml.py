import html
import xml.etree.ElementTree as ET
print(html.escape("<a href='x'>&</a>"), html.unescape("&lt;p&gt; &amp; &#39;"))
root = ET.fromstring("<root><item id='1'>one</item><item id='2'>two</item></root>")
print([(i.get("id"), i.text) for i in root.findall("item")])
new = ET.Element("note", attrib={"lang": "en"})
ET.SubElement(new, "to").text = "Ada"
print(ET.tostring(new, encoding="unicode"))
