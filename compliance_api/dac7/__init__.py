"""DAC7 (Council Directive (EU) 2021/514): sellers, their relevant activities, read grants and the DPI report.

What is implemented (Council Directive (EU) 2021/514, Annex V):
- A seller is a freelancer with a TIN and the member state that issued it, per environment; the TIN is checked for
  that state with python-stdnum (`tin.py`).
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
- The DPI export (`dpi.py`) writes OECD DPI XML v1.0 for the reportable sellers of a year.
"""
