"""DAC7 (Council Directive (EU) 2021/514): sellers, their relevant activities, read grants and the DPI report.

What is implemented (Council Directive (EU) 2021/514, Annex V):
- The reporting platform operator (name, TIN, address, nexus) is set once per environment (`operator.py`).
- A seller is a freelancer with the identity Annex V asks for, per environment (`identity.py`): an individual's name,
  address, TINs (or their documented absence and the place of birth), VAT number, date of birth; an entity's legal
  name, business registration number and permanent establishments; the IBAN and its holder. TINs are checked per
  member state with python-stdnum (`tin.py`), VAT numbers and IBANs too. The identity is sealed at rest (`sealing.py`),
  set by the seller's own account (API) or in bulk (`identity_file.py`), read by the seller and its grant holders.
- Activities come from files (`activity_file.py`) keyed by the platform's own `activity_id`; amounts are integer cents
  (EUR) read as Decimal, never floats; each activity is kept with its year and quarter.
- Consideration is net, as Annex V defines it: paid or credited, less the fees, commissions and taxes withheld.
- Reportable sellers: a seller with any personal service is reportable whatever the amount (DAC7 has no de minimis
  for personal services); a seller of goods only is an excluded seller below 30 sales and at most EUR 2,000 net in
  the year. Not modelled: rental of immovable property and of means of transport, and the exclusions of government
  entities, listed entities and large property rentals (freelancers are none of these).
- Reads (`GET /v1/dac7/seller/{freelancer_id}`): the seller itself or a user holding the seller's active grant, in
  the request's environment; anyone else gets the same 403 whether or not the seller exists. A grant names its
  grantee by user id (`grantee_id`), not by e-mail, so the API never confirms that an address has an account.
- The export (`dpi.py`) writes the year's DAC7 message (OECD DPI XML v1.0, `MessageType` `DAC7`): new records,
  corrections and deletions since the last export, or `DPI403`; production refuses sellers lacking data.
- Records past the record-keeping period (5 to 10 years after the reportable period) are wiped (`retention.py`).
"""
