#!/usr/bin/python3
"""Writes the confirmation emails of ExtractionEndToEndTests to ../Fixtures/extraction/.

The messages are built the way bulk senders' mail systems build them: multipart/alternative with a
text part and an HTML part (quoted-printable or base64), multipart/related with inline images,
multipart/mixed with a PDF or a forwarded message, declared charsets UTF-8, ISO-8859-1 and
windows-1252, CRLF line endings as on the wire. The files are committed; run this only to change them:

    /usr/bin/python3 Tests/GatewayIntegrationTests/Scripts/make-extraction-fixtures.py
"""
import base64
from email.header import Header
import os
import quopri

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "extraction")


def encode(text, charset, cte):
    data = text.encode(charset)
    if cte == "quoted-printable":
        body = quopri.encodestring(data.replace(b"\r\n", b"\n"))
    elif cte == "base64":
        body = base64.encodebytes(data)
    else:
        body = data.replace(b"\r\n", b"\n")
    return body.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def leaf(content_type, text=None, charset="utf-8", cte="7bit", data=None, extra=()):
    headers = []
    if text is not None:
        headers.append(f"Content-Type: {content_type}; charset={charset}")
        body = encode(text, charset, cte)
    else:
        headers.append(f"Content-Type: {content_type}")
        body = base64.encodebytes(data).replace(b"\n", b"\r\n")
        cte = "base64"
    headers.append(f"Content-Transfer-Encoding: {cte}")
    headers.extend(extra)
    return ("\r\n".join(headers) + "\r\n\r\n").encode("ascii") + body


def multipart(subtype, boundary, parts, extra=()):
    head = [f'Content-Type: multipart/{subtype};\r\n\tboundary="{boundary}"', *extra]
    out = ("\r\n".join(head) + "\r\n\r\n").encode("ascii")
    out += b"This is a multi-part message in MIME format.\r\n"
    for part in parts:
        out += f"\r\n--{boundary}\r\n".encode("ascii") + part
    out += f"\r\n--{boundary}--\r\n".encode("ascii")
    return out


def message(sender, to, subject, message_id, date, body, mbox=None):
    head = ""
    if mbox:
        head += mbox + "\r\n"
    head += (
        f"Return-Path: <bounces@{sender.split('@')[1].rstrip('>')}>\r\n"
        f"Received: from mta-out-7.{sender.split('@')[1].rstrip('>')} (mta-out-7 [192.0.2.25])\r\n"
        f"\tby mx.guest.example.net with ESMTPS id 4Xk2Qp1v3dz9t\r\n"
        f"\tfor <eva@guest.example.net>; {date}\r\n"
        f"From: {sender}\r\n"
        f"To: {to}\r\n"
        f"Subject: {subject if subject.isascii() else Header(subject, 'utf-8').encode()}\r\n"
        f"Date: {date}\r\n"
        f"Message-ID: <{message_id}>\r\n"
        f"MIME-Version: 1.0\r\n"
    )
    return head.encode("ascii") + body


def html_page(title, charset, content, markup_head=""):
    return f"""<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head>
<meta http-equiv="Content-Type" content="text/html; charset={charset}" />
<meta name="viewport" content="width=device-width, initial-scale=1.0" />
<title>{title}</title>
<style type="text/css">
  body {{ margin: 0; padding: 0; background-color: #f2f2f2; }}
  table {{ border-collapse: collapse; }}
  .label {{ color: #6b6b6b; font-size: 12px; text-transform: uppercase; }}
  .value {{ color: #1a1a1a; font-size: 16px; font-weight: bold; }}
  @media only screen and (max-width: 600px) {{ .container {{ width: 100% !important; }} }}
</style>
{markup_head}</head>
<body style="margin:0; padding:0;">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" bgcolor="#f2f2f2">
<tr><td align="center" style="padding: 24px 0;">
<table class="container" role="presentation" width="600" cellpadding="0" cellspacing="0" border="0" bgcolor="#ffffff">
{content}
<tr><td style="padding: 16px 32px; font-family: Arial, sans-serif; font-size: 11px; color: #999999;">
You receive this email because you made a booking with us. Please do not reply to this message.<br />
&copy; 2027 &middot; <a href="https://www.example.com/privacy" style="color:#999999;">Privacy</a>
</td></tr>
</table>
</td></tr>
</table>
</body>
</html>
"""


def row(label, value):
    return (
        '<tr><td style="padding: 8px 32px; font-family: Arial, sans-serif;">'
        f'<span class="label">{label}</span><br /><span class="value">{value}</span></td></tr>'
    )


def script(json_text):
    return f'<script type="application/ld+json">\n{json_text}\n</script>\n'


PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def alternative(boundary, plain, html, charset, cte):
    return multipart(
        "alternative", boundary,
        [leaf("text/plain", plain, charset, "quoted-printable" if charset != "us-ascii" else "7bit"),
         leaf("text/html", html, charset, cte)])


def single_html(html, charset, cte):
    return leaf("text/html", html, charset, cte)


FIXTURES = {}


def fixture(name, data):
    FIXTURES[name] = data


# ---------------------------------------------------------------- restaurant
restaurant_jsonld = script("""{
  "@context": "http://schema.org",
  "@type": "FoodEstablishmentReservation",
  "reservationNumber": "OT-88412",
  "reservationStatus": "http://schema.org/Confirmed",
  "underName": { "@type": "Person", "name": "Eva Green" },
  "reservationFor": {
    "@type": "Restaurant",
    "name": "Café Lumière",
    "telephone": "+33 1 42 60 00 00",
    "address": {
      "@type": "PostalAddress",
      "streetAddress": "12 rue de l'Échaudé",
      "addressLocality": "Paris",
      "postalCode": "75006",
      "addressCountry": "FR"
    }
  },
  "startTime": "2027-06-12T20:30:00+02:00",
  "partySize": "4"
}""")
fixture("restaurant-jsonld.eml", message(
    '"OpenTable" <reservations@opentable.example>', "Eva Green <eva@guest.example.net>",
    "Your reservation at Cafe Lumiere is confirmed", "r88412.1717@mail.opentable.example",
    "Tue, 01 Jun 2027 10:02:11 +0000",
    alternative(
        "----=_Part_4412_1791237.1780308131",
        "Your table for 4 at Café Lumière on Saturday, June 12 at 8:30 PM is confirmed.\nConfirmation: OT-88412\n",
        html_page("Reservation confirmed", "utf-8",
                  row("Restaurant", "Café Lumière") + row("When", "Saturday, June 12, 2027 · 8:30 PM")
                  + row("Party size", "4 people") + row("Confirmation", "OT-88412"),
                  restaurant_jsonld),
        "utf-8", "quoted-printable")))

restaurant_microdata = """<div itemscope itemtype="http://schema.org/FoodEstablishmentReservation">
  <meta itemprop="reservationNumber" content="BK-20417"/>
  <link itemprop="reservationStatus" href="http://schema.org/Confirmed"/>
  <div itemprop="underName" itemscope itemtype="http://schema.org/Person">
    <meta itemprop="name" content="Eva Green"/>
  </div>
  <div itemprop="reservationFor" itemscope itemtype="http://schema.org/FoodEstablishment">
    <table role="presentation" width="100%"><tr><td style="padding: 8px 32px; font-family: Georgia, serif;">
    <span class="value" itemprop="name">L’Entrecôte – Grill &amp; Bar</span>
    <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress">
      <span itemprop="streetAddress">Großer Burstah 31</span>,
      <span itemprop="postalCode">20457</span> <span itemprop="addressLocality">Hamburg</span>
      <meta itemprop="addressCountry" content="DE"/>
    </div>
    </td></tr></table>
  </div>
  <meta itemprop="startTime" content="2027-05-21T19:00:00+02:00"/>
  <meta itemprop="partySize" content="2"/>
</div>
"""
fixture("restaurant-microdata.eml", message(
    '"Bookatable" <noreply@bookatable.example>', "eva@guest.example.net",
    "=?windows-1252?Q?Ihre_Reservierung_im_L=92Entrec=F4te?=", "BK20417.mailer@bookatable.example",
    "Fri, 14 May 2027 16:45:00 +0200",
    single_html(html_page("Reservierung bestätigt", "windows-1252",
                          row("Reservierung", "Tisch für 2 Personen – Freitag, 21. Mai, 19:00 Uhr")
                          + "<tr><td>" + restaurant_microdata + "</td></tr>"),
                "windows-1252", "quoted-printable")))

# ---------------------------------------------------------------- flight
flight_jsonld = script("""[{
  "@context": "http://schema.org",
  "@type": "FlightReservation",
  "reservationNumber": "LH4XQ9",
  "reservationStatus": "http://schema.org/ReservationConfirmed",
  "underName": { "@type": "Person", "name": "Eva Green" },
  "reservationFor": {
    "@type": "Flight",
    "flightNumber": "400",
    "airline": { "@type": "Airline", "name": "Lufthansa", "iataCode": "LH" },
    "departureAirport": { "@type": "Airport", "name": "Frankfurt am Main", "iataCode": "FRA" },
    "departureTime": "2027-07-02T10:15:00+02:00",
    "arrivalAirport": { "@type": "Airport", "name": "New York JFK", "iataCode": "JFK" },
    "arrivalTime": "2027-07-02T12:55:00-04:00"
  },
  "airplaneSeat": "23C",
  "airplaneSeatClass": { "@type": "AirplaneSeatClass", "name": "Economy" },
  "ticketNumber": "220 2412345678"
}]""")
fixture("flight-jsonld.eml", message(
    '"Lufthansa" <booking-confirmation@lufthansa.example>', '"Green, Eva" <eva@guest.example.net>',
    "Ihre Buchungsbestätigung / Your booking confirmation LH4XQ9", "LH4XQ9-20270601-7781@lufthansa.example",
    "Tue, 01 Jun 2027 08:00:03 +0200",
    alternative(
        "b1_0c5b2d3f8e7a9c1d4e6f",
        "Frankfurt (FRA) – New York (JFK), LH 400, 2 July 2027 10:15\nBooking code: LH4XQ9\n",
        html_page("Booking confirmation", "utf-8",
                  row("Flight", "LH 400 · Frankfurt → New York") + row("Departure", "Fri 2 July 2027 · 10:15")
                  + row("Booking code", "LH4XQ9"),
                  flight_jsonld),
        "utf-8", "base64")))

flight_microdata = """<div itemscope itemtype="http://schema.org/FlightReservation">
  <meta itemprop="reservationNumber" content="TP8KJ2"/>
  <link itemprop="reservationStatus" href="http://schema.org/Confirmed"/>
  <div itemprop="underName" itemscope itemtype="http://schema.org/Person">
    <meta itemprop="name" content="João Gonçalves"/>
  </div>
  <div itemprop="reservationFor" itemscope itemtype="http://schema.org/Flight">
    <meta itemprop="flightNumber" content="TP1351"/>
    <div itemprop="airline" itemscope itemtype="http://schema.org/Airline">
      <meta itemprop="name" content="TAP Air Portugal"/>
      <meta itemprop="iataCode" content="TP"/>
    </div>
    <div itemprop="departureAirport" itemscope itemtype="http://schema.org/Airport">
      <meta itemprop="name" content="Lisboa Humberto Delgado"/>
      <meta itemprop="iataCode" content="LIS"/>
    </div>
    <time itemprop="departureTime" datetime="2027-09-14T07:05:00+01:00">14 Set 07:05</time>
    <div itemprop="arrivalAirport" itemscope itemtype="http://schema.org/Airport">
      <meta itemprop="name" content="London Heathrow"/>
      <meta itemprop="iataCode" content="LHR"/>
    </div>
    <time itemprop="arrivalTime" datetime="2027-09-14T09:45:00+01:00">14 Set 09:45</time>
  </div>
</div>
"""
fixture("flight-microdata.eml", message(
    '"TAP Air Portugal" <noreply@flytap.example>', "=?utf-8?q?Jo=C3=A3o_Gon=C3=A7alves?= <eva@guest.example.net>",
    "=?utf-8?b?Q29uZmlybWHDp8OjbyBkYSByZXNlcnZhIFRQOEtKMg==?=", "tp8kj2.4471@flytap.example",
    "Mon, 30 Aug 2027 21:13:40 +0100",
    multipart("alternative", "=_alt_TP8KJ2", [
        leaf("text/plain", "Lisboa (LIS) → Londres (LHR), TP1351, 14 Set 2027 07:05\nReserva: TP8KJ2\n",
             "utf-8", "quoted-printable"),
        multipart("related", "=_rel_TP8KJ2", [
            leaf("text/html", html_page("Confirmação", "utf-8",
                                        '<tr><td><img src="cid:logo@flytap.example" width="120" alt="TAP" /></td></tr>'
                                        + row("Voo", "TP1351 · Lisboa → Londres")
                                        + "<tr><td>" + flight_microdata + "</td></tr>"),
                 "utf-8", "quoted-printable"),
            leaf("image/png", data=PNG, extra=("Content-ID: <logo@flytap.example>",
                                               'Content-Disposition: inline; filename="logo.png"')),
        ]),
    ])))

# ---------------------------------------------------------------- lodging
lodging_jsonld = script("""{
  "@context": "http://schema.org",
  "@type": "LodgingReservation",
  "reservationNumber": "HC-552019",
  "reservationStatus": "http://schema.org/Confirmed",
  "underName": { "@type": "Person", "name": "Eva Green" },
  "reservationFor": {
    "@type": "Hotel",
    "name": "Hôtel du Château",
    "telephone": "+33 4 78 00 00 00",
    "address": {
      "@type": "PostalAddress",
      "streetAddress": "8 place Bellecour",
      "addressLocality": "Lyon",
      "addressRegion": "Auvergne-Rhône-Alpes",
      "postalCode": "69002",
      "addressCountry": "FR"
    }
  },
  "checkinDate": "2027-10-08T15:00:00+02:00",
  "checkoutDate": "2027-10-10T11:00:00+02:00"
}""")
fixture("lodging-jsonld.eml", message(
    '"Hotel du Chateau" <reservation@hotel-chateau.example>', "eva@guest.example.net",
    "=?iso-8859-1?Q?Confirmation_de_r=E9servation_HC-552019?=", "HC552019@hotel-chateau.example",
    "Wed, 22 Sep 2027 14:20:00 +0200",
    alternative(
        "------------050708090601020304050607",
        "Votre séjour à l'Hôtel du Château du 8 au 10 octobre 2027 est confirmé.\n",
        html_page("Réservation confirmée", "iso-8859-1",
                  row("Hôtel", "Hôtel du Château") + row("Arrivée", "vendredi 8 octobre 2027, à partir de 15h")
                  + row("Départ", "dimanche 10 octobre 2027, avant 11h"),
                  lodging_jsonld),
        "iso-8859-1", "quoted-printable")))

lodging_microdata = """<div itemscope itemtype="http://schema.org/LodgingReservation">
  <meta itemprop="reservationId" content="ZS-7781"/>
  <link itemprop="reservationStatus" href="http://schema.org/ReservationConfirmed"/>
  <div itemprop="underName" itemscope itemtype="http://schema.org/Person">
    <span itemprop="name">Jürgen Weiß</span>
  </div>
  <div itemprop="reservationFor" itemscope itemtype="http://schema.org/LodgingBusiness">
    <span itemprop="name">Gasthof Zur Sonne</span>
    <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress">
      <span itemprop="streetAddress">Müllerstraße 5</span>,
      <span itemprop="postalCode">80469</span> <span itemprop="addressLocality">München</span>
      <meta itemprop="addressCountry" content="DE"/>
    </div>
  </div>
  <time itemprop="checkinTime" datetime="2027-12-27T14:00:00+01:00">Mo, 27.12.2027</time>
  <time itemprop="checkoutTime" datetime="2027-12-30T10:00:00+01:00">Do, 30.12.2027</time>
</div>
"""
fixture("lodging-microdata.eml", message(
    '"Gasthof Zur Sonne" <info@gasthof-sonne.example>', "=?iso-8859-1?q?J=FCrgen_Wei=DF?= <eva@guest.example.net>",
    "=?iso-8859-1?q?Buchungsbest=E4tigung_ZS-7781?=", "ZS-7781.1@gasthof-sonne.example",
    "Thu, 02 Dec 2027 09:30:00 +0100",
    alternative(
        "=_sonne_7781",
        "Vielen Dank für Ihre Buchung vom 27.12. bis 30.12.2027.\n",
        html_page("Buchungsbestätigung", "iso-8859-1",
                  row("Zimmer", "Doppelzimmer, 3 Nächte") + "<tr><td>" + lodging_microdata + "</td></tr>"),
        "iso-8859-1", "base64")))

# ---------------------------------------------------------------- rental car
rental_jsonld = script("""{
  "@context": "https://schema.org/",
  "@type": "RentalCarReservation",
  "reservationNumber": "9981-2231-CH",
  "reservationStatus": "https://schema.org/ReservationConfirmed",
  "underName": { "@type": "Person", "name": "Eva Green" },
  "reservationFor": {
    "@type": "Car",
    "name": "VW Golf or similar",
    "rentalCompany": { "@type": "Organization", "name": "Sixt" }
  },
  "pickupLocation": {
    "@type": "Place",
    "name": "Zürich Flughafen",
    "address": { "@type": "PostalAddress", "streetAddress": "Parkhaus P3", "addressLocality": "Zürich", "postalCode": "8058", "addressCountry": "CH" }
  },
  "pickupTime": "2027-08-03T09:00:00+02:00",
  "dropoffLocation": {
    "@type": "Place",
    "name": "Genève Aéroport",
    "address": { "@type": "PostalAddress", "streetAddress": "Route de l’Aéroport 21", "addressLocality": "Genève", "postalCode": "1215", "addressCountry": "CH" }
  },
  "dropoffTime": "2027-08-10T18:00:00+02:00"
}""")
fixture("rentalcar-jsonld.eml", message(
    '"Sixt" <reservations@sixt.example>', "eva@guest.example.net",
    "Your Sixt reservation 9981-2231-CH", "9981-2231-CH.confirm@sixt.example",
    "Sat, 24 Jul 2027 11:11:11 +0200",
    alternative(
        "_000_SIXT99812231CH_",
        "Pick-up: Zürich Flughafen, 3 Aug 2027 09:00 – Return: Genève Aéroport, 10 Aug 2027 18:00\n",
        html_page("Reservation", "windows-1252",
                  row("Pick-up", "Zürich Flughafen – Tue 3 Aug 2027, 09:00")
                  + row("Return", "Genève Aéroport – Tue 10 Aug 2027, 18:00"),
                  rental_jsonld),
        "windows-1252", "quoted-printable")))

rental_microdata = """<div itemscope itemtype="http://schema.org/RentalCarReservation">
  <meta itemprop="reservationNumber" content="H-546323"/>
  <link itemprop="reservationStatus" href="http://schema.org/Confirmed"/>
  <div itemprop="underName" itemscope itemtype="http://schema.org/Person">
    <meta itemprop="name" content="Eva Green"/>
  </div>
  <div itemprop="reservationFor" itemscope itemtype="http://schema.org/Car">
    <meta itemprop="name" content="Chevrolet Malibu"/>
    <div itemprop="rentalCompany" itemscope itemtype="http://schema.org/Organization">
      <meta itemprop="name" content="Hertz"/>
    </div>
  </div>
  <div itemprop="pickupLocation" itemscope itemtype="http://schema.org/Place">
    <meta itemprop="name" content="Hertz San Diego Airport"/>
    <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress">
      <meta itemprop="streetAddress" content="1500 Cecil Ave"/>
      <meta itemprop="addressLocality" content="San Diego"/>
      <meta itemprop="addressRegion" content="CA"/>
      <meta itemprop="addressCountry" content="US"/>
    </div>
  </div>
  <meta itemprop="pickupTime" content="2027-08-05T16:00:00-07:00"/>
  <div itemprop="dropoffLocation" itemscope itemtype="http://schema.org/Place">
    <meta itemprop="name" content="Hertz LAX"/>
    <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress">
      <meta itemprop="streetAddress" content="9000 Airport Blvd"/>
      <meta itemprop="addressLocality" content="Los Angeles"/>
      <meta itemprop="addressRegion" content="CA"/>
      <meta itemprop="addressCountry" content="US"/>
    </div>
  </div>
  <meta itemprop="dropoffTime" content="2027-08-06T20:00:00-07:00"/>
</div>
"""
fixture("rentalcar-microdata.eml", message(
    '"Hertz" <hertz@emails.hertz.example>', "eva@guest.example.net",
    "Your Hertz Reservation H-546323 – Confirmed".replace("–", "-"), "546323.20270801@emails.hertz.example",
    "Sun, 01 Aug 2027 17:02:44 -0700",
    single_html(html_page("Hertz reservation", "utf-8",
                          row("Pick-up", "Thu, Aug 5, 2027 at 4:00 PM – San Diego Airport")
                          + "<tr><td>" + rental_microdata + "</td></tr>"),
                "utf-8", "8bit")))

# ---------------------------------------------------------------- train
train_jsonld = script("""{
  "@context": "http://schema.org",
  "@type": "TrainReservation",
  "reservationNumber": "DB7Y3K",
  "reservationStatus": "http://schema.org/Confirmed",
  "underName": { "@type": "Person", "name": "Eva Green" },
  "reservationFor": {
    "@type": "TrainTrip",
    "trainNumber": "ICE 597",
    "trainCompany": { "@type": "Organization", "name": "Deutsche Bahn" },
    "departureStation": {
      "@type": "TrainStation", "name": "München Hbf",
      "address": { "@type": "PostalAddress", "streetAddress": "Bayerstraße 10A", "addressLocality": "München", "addressCountry": "DE" }
    },
    "departureTime": "2027-05-04T10:30:00+02:00",
    "arrivalStation": {
      "@type": "TrainStation", "name": "Berlin Hbf",
      "address": { "@type": "PostalAddress", "streetAddress": "Europaplatz 1", "addressLocality": "Berlin", "addressCountry": "DE" }
    },
    "arrivalTime": "2027-05-04T14:32:00+02:00"
  },
  "reservedTicket": {
    "@type": "Ticket",
    "ticketedSeat": { "@type": "Seat", "seatNumber": "65", "seatSection": "Wagen 12" }
  }
}""")
fixture("train-jsonld.eml", message(
    '"DB Vertrieb GmbH" <buchungsbestaetigung@bahn.example>', "eva@guest.example.net",
    "=?utf-8?q?Ihre_Buchungsbest=C3=A4tigung_(Auftrag_DB7Y3K)?=", "DB7Y3K.20270420@bahn.example",
    "Tue, 20 Apr 2027 19:44:00 +0200",
    multipart("mixed", "==MIXED_DB7Y3K==", [
        alternative("==ALT_DB7Y3K==",
                    "München Hbf 10:30 → Berlin Hbf 14:32, ICE 597, Wagen 12, Platz 65\n",
                    html_page("Buchungsbestätigung", "utf-8",
                              row("Hinfahrt", "Di, 04.05.2027 · München Hbf 10:30 → Berlin Hbf 14:32")
                              + row("Zug", "ICE 597 · Wagen 12 · Platz 65"),
                              train_jsonld),
                    "utf-8", "quoted-printable"),
        leaf("application/pdf", data=PDF, extra=('Content-Disposition: attachment; filename="Ticket_DB7Y3K.pdf"',)),
    ])))

train_microdata = """<div itemscope itemtype="http://schema.org/TrainReservation">
  <meta itemprop="reservationNumber" content="QXPZ4K"/>
  <link itemprop="reservationStatus" href="http://schema.org/Confirmed"/>
  <div itemprop="underName" itemscope itemtype="http://schema.org/Person">
    <meta itemprop="name" content="Hélène Dubois"/>
  </div>
  <div itemprop="reservationFor" itemscope itemtype="http://schema.org/TrainTrip">
    <meta itemprop="trainNumber" content="6611"/>
    <meta itemprop="trainName" content="TGV INOUI"/>
    <div itemprop="departureStation" itemscope itemtype="http://schema.org/TrainStation">
      <span itemprop="name">Paris Gare de Lyon</span>
      <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress">
        <meta itemprop="streetAddress" content="Place Louis-Armand"/>
        <meta itemprop="addressLocality" content="Paris"/>
        <meta itemprop="addressCountry" content="FR"/>
      </div>
    </div>
    <meta itemprop="departureTime" content="2027-07-14T07:37:00+02:00"/>
    <div itemprop="arrivalStation" itemscope itemtype="http://schema.org/TrainStation">
      <span itemprop="name">Marseille Saint-Charles</span>
      <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress">
        <meta itemprop="streetAddress" content="Square Narvik"/>
        <meta itemprop="addressLocality" content="Marseille"/>
        <meta itemprop="addressCountry" content="FR"/>
      </div>
    </div>
    <meta itemprop="arrivalTime" content="2027-07-14T10:55:00+02:00"/>
  </div>
</div>
"""
fixture("train-microdata.eml", message(
    '"SNCF Connect" <confirmation@sncf-connect.example>', "eva@guest.example.net",
    "=?iso-8859-1?q?Votre_r=E9servation_QXPZ4K_est_confirm=E9e?=", "QXPZ4K-1@sncf-connect.example",
    "Thu, 01 Jul 2027 22:05:00 +0200",
    alternative(
        "----=_NextPart_000_0012_01D8A4C2.5E3F1B20",
        "Aller : Paris Gare de Lyon 07h37 - Marseille Saint-Charles 10h55, TGV INOUI 6611\n",
        html_page("Réservation confirmée", "iso-8859-1",
                  row("Aller", "mercredi 14 juillet · 07h37 - 10h55") + "<tr><td>" + train_microdata + "</td></tr>"),
        "iso-8859-1", "base64")))

# ---------------------------------------------------------------- bus
bus_jsonld = script("""{
  "@context": "http://schema.org",
  "@type": "BusReservation",
  "reservationNumber": "FX-3390127",
  "reservationStatus": "http://schema.org/Confirmed",
  "underName": { "@type": "Person", "name": "Eva Green" },
  "reservationFor": {
    "@type": "BusTrip",
    "busNumber": "N1127",
    "busCompany": { "@type": "Organization", "name": "FlixBus" },
    "departureBusStop": {
      "@type": "BusStop", "name": "Kraków MDA",
      "address": { "@type": "PostalAddress", "streetAddress": "ul. Bosacka 18", "addressLocality": "Kraków", "addressCountry": "PL" }
    },
    "departureTime": "2027-04-16T22:10:00+02:00",
    "arrivalBusStop": {
      "@type": "BusStop", "name": "Wien Erdberg (VIB)",
      "address": { "@type": "PostalAddress", "streetAddress": "Erdbergstraße 200A", "addressLocality": "Wien", "addressCountry": "AT" }
    },
    "arrivalTime": "2027-04-17T05:45:00+02:00"
  }
}""")
fixture("bus-jsonld.eml", message(
    '"FlixBus" <booking@flixbus.example>', "eva@guest.example.net",
    "Your booking confirmation #3390127", "3390127.booking@flixbus.example",
    "Mon, 05 Apr 2027 12:00:00 +0200",
    alternative(
        "--==_mimepart_6610a1b2c3d4e_5f2",
        "Kraków MDA 22:10 - Wien Erdberg 05:45\n",
        html_page("Booking confirmation", "windows-1252",
                  row("Route", "Kraków MDA – Wien Erdberg (VIB)") + row("Departure", "Fri, 16 Apr 2027 · 22:10"),
                  bus_jsonld),
        "windows-1252", "base64")))

bus_microdata = """<div itemscope itemtype="http://schema.org/BusReservation">
  <meta itemprop="reservationNumber" content="GL-66120"/>
  <link itemprop="reservationStatus" href="http://schema.org/Confirmed"/>
  <div itemprop="underName" itemscope itemtype="http://schema.org/Person">
    <meta itemprop="name" content="Eva Green"/>
  </div>
  <div itemprop="reservationFor" itemscope itemtype="http://schema.org/BusTrip">
    <meta itemprop="busNumber" content="1412"/>
    <meta itemprop="busName" content="Greyhound Express"/>
    <div itemprop="departureBusStop" itemscope itemtype="http://schema.org/BusStation">
      <meta itemprop="name" content="New York Port Authority"/>
      <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress">
        <meta itemprop="streetAddress" content="625 8th Ave"/>
        <meta itemprop="addressLocality" content="New York"/>
        <meta itemprop="addressRegion" content="NY"/>
        <meta itemprop="addressCountry" content="US"/>
      </div>
    </div>
    <meta itemprop="departureTime" content="2027-03-20T08:00:00-04:00"/>
    <div itemprop="arrivalBusStop" itemscope itemtype="http://schema.org/BusStation">
      <meta itemprop="name" content="Boston South Station"/>
      <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress">
        <meta itemprop="streetAddress" content="700 Atlantic Ave"/>
        <meta itemprop="addressLocality" content="Boston"/>
        <meta itemprop="addressRegion" content="MA"/>
        <meta itemprop="addressCountry" content="US"/>
      </div>
    </div>
    <meta itemprop="arrivalTime" content="2027-03-20T12:25:00-04:00"/>
  </div>
</div>
"""
fixture("bus-microdata.eml", message(
    '"Greyhound" <tickets@greyhound.example>', "eva@guest.example.net",
    "Your Greyhound trip GL-66120", "GL-66120@greyhound.example",
    "Wed, 10 Mar 2027 09:00:00 -0500",
    alternative(
        "b2_greyhound_66120",
        "New York, NY 8:00 AM -> Boston, MA 12:25 PM\n",
        html_page("Your trip", "utf-8", row("Trip", "New York → Boston") + "<tr><td>" + bus_microdata + "</td></tr>"),
        "utf-8", "quoted-printable")))

# ---------------------------------------------------------------- boat
boat_jsonld = script("""{
  "@context": "https://schema.org",
  "@type": "BoatReservation",
  "reservationId": "SL-40032871",
  "reservationStatus": "https://schema.org/ReservationConfirmed",
  "underName": { "@type": "Person", "name": "Eva Green" },
  "reservationFor": {
    "@type": "BoatTrip",
    "name": "Göteborg – Kiel",
    "provider": { "@type": "Organization", "name": "Stena Line" },
    "departureBoatTerminal": {
      "@type": "BoatTerminal", "name": "Göteborg Tysklandsterminalen",
      "address": { "@type": "PostalAddress", "streetAddress": "Emigrantvägen 20", "addressLocality": "Göteborg", "addressCountry": "SE" }
    },
    "departureTime": "2027-06-25T18:45:00+02:00",
    "arrivalBoatTerminal": {
      "@type": "BoatTerminal", "name": "Kiel Schwedenkai",
      "address": { "@type": "PostalAddress", "streetAddress": "Schwedenkai 1", "addressLocality": "Kiel", "addressCountry": "DE" }
    },
    "arrivalTime": "2027-06-26T09:15:00+02:00"
  }
}""")
fixture("boat-jsonld.eml", message(
    '"Stena Line" <booking@stenaline.example>', "eva@guest.example.net",
    "=?utf-8?q?Bokningsbekr=C3=A4ftelse_40032871?=", "40032871@stenaline.example",
    "Fri, 04 Jun 2027 13:37:00 +0200",
    alternative(
        "=-=-=_stena_40032871",
        "Göteborg 18:45 – Kiel 09:15\n",
        html_page("Bokningsbekräftelse", "utf-8",
                  row("Resa", "Göteborg – Kiel") + row("Avgång", "fredag 25 juni 2027 kl. 18:45"),
                  boat_jsonld),
        "utf-8", "quoted-printable")))

boat_microdata = """<div itemscope itemtype="http://schema.org/BoatReservation">
  <meta itemprop="reservationId" content="BF-771204"/>
  <link itemprop="reservationStatus" href="http://schema.org/ReservationConfirmed"/>
  <div itemprop="underName" itemscope itemtype="http://schema.org/Person">
    <meta itemprop="name" content="Eva Green"/>
  </div>
  <div itemprop="reservationFor" itemscope itemtype="http://schema.org/BoatTrip">
    <meta itemprop="name" content="Portsmouth - Saint-Malo"/>
    <div itemprop="departureBoatTerminal" itemscope itemtype="http://schema.org/BoatTerminal">
      <meta itemprop="name" content="Portsmouth International Port"/>
      <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress">
        <meta itemprop="streetAddress" content="George Byng Way"/>
        <meta itemprop="addressLocality" content="Portsmouth"/>
        <meta itemprop="addressCountry" content="GB"/>
      </div>
    </div>
    <meta itemprop="departureTime" content="2027-08-20T20:15:00+01:00"/>
    <div itemprop="arrivalBoatTerminal" itemscope itemtype="http://schema.org/BoatTerminal">
      <meta itemprop="name" content="Terminal du Naye, Saint-Malo"/>
      <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress">
        <meta itemprop="streetAddress" content="Quai Saint-Louis"/>
        <meta itemprop="addressLocality" content="Saint-Malo"/>
        <meta itemprop="addressCountry" content="FR"/>
      </div>
    </div>
    <meta itemprop="arrivalTime" content="2027-08-21T08:15:00+02:00"/>
  </div>
</div>
"""
fixture("boat-microdata.eml", message(
    '"Brittany Ferries" <reservations@brittany-ferries.example>', "eva@guest.example.net",
    "=?iso-8859-1?q?Confirmation_de_r=E9servation_BF-771204?=", "BF-771204@brittany-ferries.example",
    "Mon, 12 Jul 2027 08:15:00 +0100",
    alternative(
        "----=_Part_771204_BF",
        "Portsmouth - Saint-Malo, vendredi 20 août 2027, 20h15\n",
        html_page("Réservation", "iso-8859-1",
                  row("Traversée", "Portsmouth - Saint-Malo, 20 août 2027") + "<tr><td>" + boat_microdata + "</td></tr>"),
        "iso-8859-1", "quoted-printable")))

# ---------------------------------------------------------------- event
event_jsonld = script("""{
  "@context": "http://schema.org",
  "@type": "EventReservation",
  "reservationNumber": "TM-5512-0093",
  "reservationStatus": "http://schema.org/Confirmed",
  "underName": { "@type": "Person", "name": "Eva Green" },
  "reservationFor": {
    "@type": "MusicEvent",
    "name": "Sigur Rós – World Tour",
    "startDate": "2027-11-05T20:00:00+01:00",
    "location": {
      "@type": "Place",
      "name": "Harpa Eldborg",
      "address": { "@type": "PostalAddress", "streetAddress": "Austurbakki 2", "addressLocality": "Reykjavík", "addressCountry": "IS" }
    }
  },
  "reservedTicket": {
    "@type": "Ticket",
    "ticketNumber": "5512009301",
    "ticketedSeat": { "@type": "Seat", "seatSection": "Parterre", "seatRow": "F", "seatNumber": "14" }
  }
}""")
fixture("event-jsonld.eml", message(
    '"Ticketmaster" <customer_support@email.ticketmaster.example>', "eva@guest.example.net",
    "=?utf-8?b?WW91ciB0aWNrZXRzIGZvciBTaWd1ciBSw7Nz?=", "TM55120093.order@email.ticketmaster.example",
    "Sat, 02 Oct 2027 10:10:10 +0000",
    alternative(
        "Apple-Mail=_5512_0093",
        "Sigur Rós – Harpa Eldborg, Reykjavík – Fri 5 Nov 2027 20:00\n",
        html_page("Your tickets", "utf-8",
                  row("Event", "Sigur Rós – World Tour") + row("Venue", "Harpa Eldborg, Reykjavík"),
                  event_jsonld),
        "utf-8", "base64")))

event_microdata = """<div itemscope itemtype="http://schema.org/EventReservation">
  <meta itemprop="reservationNumber" content="CH-10298"/>
  <link itemprop="reservationStatus" href="http://schema.org/Confirmed"/>
  <div itemprop="underName" itemscope itemtype="http://schema.org/Person">
    <meta itemprop="name" content="Eva Green"/>
  </div>
  <div itemprop="reservationFor" itemscope itemtype="http://schema.org/TheaterEvent">
    <h2 itemprop="name" style="font-family: Didot, serif;">Les Misérables – Première</h2>
    <time itemprop="startDate" datetime="2027-02-19T19:30:00+01:00">vendredi 19 février, 19h30</time>
    <div itemprop="location" itemscope itemtype="http://schema.org/Place">
      <span itemprop="name">Théâtre du Châtelet</span>
      <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress">
        <span itemprop="streetAddress">1 place du Châtelet</span>,
        <span itemprop="addressLocality">Paris</span>
        <meta itemprop="addressCountry" content="FR"/>
      </div>
    </div>
  </div>
  <meta itemprop="venueSeat" content="112"/>
  <meta itemprop="venueRow" content="K"/>
</div>
"""
fixture("event-microdata.eml", message(
    '"Theatre du Chatelet" <billetterie@chatelet.example>', "eva@guest.example.net",
    "=?windows-1252?q?Vos_billets_=96_Les_Mis=E9rables?=", "CH-10298@chatelet.example",
    "Sun, 10 Jan 2027 18:00:00 +0100",
    single_html(html_page("Vos billets", "windows-1252",
                          row("Spectacle", "Les Misérables – Première") + "<tr><td>" + event_microdata + "</td></tr>"),
                "windows-1252", "quoted-printable")))

# ---------------------------------------------------------------- a round trip for two passengers


def leg(passenger, number, origin, destination, departure, arrival):
    return f"""  {{
    "@type": "FlightReservation",
    "reservationNumber": "KX7Q2P",
    "reservationStatus": "http://schema.org/Confirmed",
    "underName": {{ "@type": "Person", "name": "{passenger}" }},
    "reservationFor": {{
      "@type": "Flight",
      "flightNumber": "{number}",
      "airline": {{ "@type": "Airline", "name": "KLM", "iataCode": "KL" }},
      "departureAirport": {{ "@type": "Airport", "name": "{origin[1]}", "iataCode": "{origin[0]}" }},
      "departureTime": "{departure}",
      "arrivalAirport": {{ "@type": "Airport", "name": "{destination[1]}", "iataCode": "{destination[0]}" }},
      "arrivalTime": "{arrival}"
    }}
  }}"""


AMS = ("AMS", "Amsterdam Schiphol")
LIS = ("LIS", "Lisbon")
legs = []
for passenger in ["Eva Green", "John Green"]:
    legs.append(leg(passenger, "1691", AMS, LIS, "2027-04-01T09:40:00+02:00", "2027-04-01T11:55:00+01:00"))
    legs.append(leg(passenger, "1696", LIS, AMS, "2027-04-08T18:20:00+01:00", "2027-04-08T22:25:00+02:00"))
fixture("flight-round-trip-two-passengers.eml", message(
    '"KLM Royal Dutch Airlines" <noreply@klm.example>', "eva@guest.example.net",
    "Booking confirmation KX7Q2P: Amsterdam - Lisbon", "KX7Q2P.bc@klm.example",
    "Mon, 01 Mar 2027 07:30:00 +0100",
    alternative(
        "KLM_BC_KX7Q2P",
        "Outbound KL1691 AMS-LIS 1 Apr, return KL1696 LIS-AMS 8 Apr. Passengers: Eva Green, John Green\n",
        html_page("Booking confirmation", "utf-8",
                  row("Outbound", "KL 1691 · Amsterdam → Lisbon · 1 April 2027")
                  + row("Return", "KL 1696 · Lisbon → Amsterdam · 8 April 2027")
                  + row("Passengers", "Eva Green, John Green"),
                  script('{\n"@context": "http://schema.org",\n"@graph": [\n' + ",\n".join(legs) + "\n]\n}")),
        "utf-8", "quoted-printable")))

# ---------------------------------------------------------------- JSON-LD stripped, Microdata kept
# What a mail pipeline that strips <script> (a list server, a security gateway) leaves of a hotel
# confirmation that carried both syntaxes: the Microdata only.
stripped_microdata = """<div itemscope itemtype="http://schema.org/LodgingReservation">
  <meta itemprop="reservationNumber" content="MR-339921"/>
  <link itemprop="reservationStatus" href="http://schema.org/Confirmed"/>
  <div itemprop="underName" itemscope itemtype="http://schema.org/Person"><meta itemprop="name" content="Eva Green"/></div>
  <div itemprop="reservationFor" itemscope itemtype="http://schema.org/Hotel">
    <meta itemprop="name" content="Marriott Marquis San Francisco"/>
    <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress">
      <meta itemprop="streetAddress" content="780 Mission St"/>
      <meta itemprop="addressLocality" content="San Francisco"/>
      <meta itemprop="addressRegion" content="CA"/>
      <meta itemprop="addressCountry" content="US"/>
    </div>
  </div>
  <meta itemprop="checkinDate" content="2027-04-11T16:00:00-07:00"/>
  <meta itemprop="checkoutDate" content="2027-04-13T11:00:00-07:00"/>
</div>
"""
fixture("microdata-scripts-stripped.eml", message(
    '"Marriott Bonvoy" <marriott@email-marriott.example>', "eva@guest.example.net",
    "[travel-list] Reservation Confirmation #MR-339921", "MR339921.list@lists.guest.example.net",
    "Mon, 01 Mar 2027 07:30:00 -0800",
    alternative(
        "==_list_MR339921",
        "Your stay at Marriott Marquis San Francisco, April 11-13, 2027\n",
        html_page("Reservation confirmation", "utf-8",
                  "<!-- script removed by the list server -->\n" + row("Hotel", "Marriott Marquis San Francisco")
                  + "<tr><td>" + stripped_microdata + "</td></tr>"),
        "utf-8", "quoted-printable")))

# ---------------------------------------------------------------- broken JSON-LD
# Wrapped in an HTML comment by a template engine, a raw line break inside a string, a trailing ";".
repaired = """<script type="application/ld+json"><!--
{
  "@context": "http://schema.org",
  "@type": "EventReservation",
  "reservationNumber": "EB-2207731",
  "reservationStatus": "http://schema.org/Confirmed",
  "underName": { "@type": "Person", "name": "Eva Green" },
  "reservationFor": {
    "@type": "Event",
    "name": "Swift Meetup
 Spring Edition",
    "startDate": "2027-04-22T18:30:00+02:00",
    "location": {
      "@type": "Place",
      "name": "Kulturbrauerei",
      "address": { "@type": "PostalAddress", "streetAddress": "Schönhauser Allee 36", "addressLocality": "Berlin", "addressCountry": "DE" }
    }
  }
};
--></script>
"""
fixture("jsonld-repaired.eml", message(
    '"Eventbrite" <noreply@order.eventbrite.example>', "eva@guest.example.net",
    "Your tickets for Swift Meetup", "EB2207731@order.eventbrite.example",
    "Thu, 01 Apr 2027 12:00:00 +0000",
    alternative("eb_2207731", "Swift Meetup, 22 April 2027, Kulturbrauerei Berlin\n",
                html_page("Your tickets", "utf-8", row("Event", "Swift Meetup – Spring Edition"), repaired),
                "utf-8", "quoted-printable")))

invalid_beside_valid = """<script type="application/ld+json">
{
  "@context": "http://schema.org",
  "@type": "FlightReservation",
  "reservationNumber": "ZZ9X1Q",
  "reservationFor": { "@type": "Flight", "flightNumber": "EZY 8234",
</script>
""" + script("""{
  "@context": "http://schema.org",
  "@type": "FoodEstablishmentReservation",
  "reservationNumber": "TF-40021",
  "reservationStatus": "http://schema.org/Confirmed",
  "underName": { "@type": "Person", "name": "Eva Green" },
  "reservationFor": {
    "@type": "Restaurant",
    "name": "Osteria Francescana",
    "address": { "@type": "PostalAddress", "streetAddress": "Via Stella 22", "addressLocality": "Modena", "addressCountry": "IT" }
  },
  "startTime": "2027-05-15T20:00:00+02:00",
  "partySize": "2"
}""")
fixture("jsonld-invalid-beside-valid.eml", message(
    '"TheFork" <noreply@thefork.example>', "eva@guest.example.net",
    "Prenotazione confermata TF-40021", "TF-40021@thefork.example",
    "Sat, 01 May 2027 10:00:00 +0200",
    alternative("tf_40021", "Osteria Francescana, 15 maggio 2027, 20:00, 2 persone\n",
                html_page("Prenotazione", "utf-8", row("Ristorante", "Osteria Francescana"), invalid_beside_valid),
                "utf-8", "quoted-printable")))

# ---------------------------------------------------------------- itemref
itemref = """<div id="booking" itemscope itemtype="http://schema.org/TrainReservation" itemref="trip traveller">
  <meta itemprop="reservationNumber" content="TL-8830"/>
  <link itemprop="reservationStatus" href="http://schema.org/Confirmed"/>
</div>
<table role="presentation" width="100%">
<tr><td id="traveller" itemprop="underName" itemscope itemtype="http://schema.org/Person" style="padding: 8px 32px;">
  Traveller: <span itemprop="name">Eva Green</span></td></tr>
<tr><td id="trip" itemprop="reservationFor" itemscope itemtype="http://schema.org/TrainTrip" style="padding: 8px 32px;">
  <span itemprop="trainNumber">IC 2013</span>:
  <span itemprop="departureStation" itemscope itemtype="http://schema.org/TrainStation"><span itemprop="name">Köln Hbf</span>
    <span itemprop="address" itemscope itemtype="http://schema.org/PostalAddress"><meta itemprop="streetAddress" content="Trankgasse 11"/><meta itemprop="addressLocality" content="Köln"/><meta itemprop="addressCountry" content="DE"/></span></span>
  <time itemprop="departureTime" datetime="2027-06-01T08:54:00+02:00">08:54</time> →
  <span itemprop="arrivalStation" itemscope itemtype="http://schema.org/TrainStation"><span itemprop="name">Hamburg Hbf</span>
    <span itemprop="address" itemscope itemtype="http://schema.org/PostalAddress"><meta itemprop="streetAddress" content="Hachmannplatz 16"/><meta itemprop="addressLocality" content="Hamburg"/><meta itemprop="addressCountry" content="DE"/></span></span>
  <time itemprop="arrivalTime" datetime="2027-06-01T12:58:00+02:00">12:58</time>
</td></tr>
</table>
"""
fixture("microdata-itemref.eml", message(
    '"Trainline" <tickets@trainline.example>', "eva@guest.example.net",
    "Your e-ticket TL-8830", "TL-8830@trainline.example",
    "Mon, 24 May 2027 16:00:00 +0100",
    alternative("tl_8830", "Köln Hbf 08:54 → Hamburg Hbf 12:58, IC 2013\n",
                html_page("Your e-ticket", "utf-8", "<tr><td>" + itemref + "</td></tr>"),
                "utf-8", "quoted-printable")))

# ---------------------------------------------------------------- minimal cancellations
fixture("cancellation-jsonld.eml", message(
    '"United Airlines" <notifications@united.example>', "eva@guest.example.net",
    "Your trip RXJ34P has been cancelled", "RXJ34P.cancel@united.example",
    "Tue, 02 Mar 2027 11:00:00 -0800",
    alternative("ua_cancel_rxj34p", "Your reservation RXJ34P has been cancelled.\n",
                html_page("Cancellation", "utf-8", row("Reservation", "RXJ34P has been cancelled"), script("""{
  "@context": "http://schema.org",
  "@type": "FlightReservation",
  "reservationNumber": "RXJ34P",
  "reservationStatus": "http://schema.org/Cancelled"
}""")),
                "utf-8", "quoted-printable")))

fixture("cancellation-microdata.eml", message(
    '"Hotel du Chateau" <reservation@hotel-chateau.example>', "eva@guest.example.net",
    "=?iso-8859-1?Q?Annulation_de_votre_r=E9servation_HC-552019?=", "HC552019.annul@hotel-chateau.example",
    "Fri, 01 Oct 2027 09:00:00 +0200",
    single_html(html_page("Annulation", "iso-8859-1", """<tr><td style="padding: 8px 32px;">
<div itemscope itemtype="http://schema.org/LodgingReservation">
  Votre réservation <span itemprop="reservationNumber">HC-552019</span> a été annulée.
  <link itemprop="reservationStatus" href="http://schema.org/ReservationCancelled"/>
</div>
</td></tr>"""), "iso-8859-1", "quoted-printable")))

# ---------------------------------------------------------------- times without offsets
fixture("flight-local-times.eml", message(
    '"Ryanair" <itinerary@ryanair.example>', "eva@guest.example.net",
    "Ryanair Travel Itinerary - Q7LMZP", "Q7LMZP.itinerary@ryanair.example",
    "Wed, 02 Jun 2027 06:12:00 +0000",
    alternative("ryr_q7lmzp", "DUB 06:35 - STN 07:55, FR 202, 18 Jun 2027\n",
                html_page("Travel itinerary", "utf-8", row("Flight", "FR 202 Dublin → London Stansted"), script("""{
  "@context": "http://schema.org",
  "@type": "FlightReservation",
  "reservationNumber": "Q7LMZP",
  "reservationStatus": "http://schema.org/Confirmed",
  "underName": { "@type": "Person", "name": "Eva Green" },
  "reservationFor": {
    "@type": "Flight",
    "flightNumber": "202",
    "airline": { "@type": "Airline", "name": "Ryanair", "iataCode": "FR" },
    "departureAirport": { "@type": "Airport", "name": "Dublin", "iataCode": "DUB" },
    "departureTime": "2027-06-18T06:35:00",
    "arrivalAirport": { "@type": "Airport", "name": "London Stansted", "iataCode": "STN" },
    "arrivalTime": "2027-06-18T07:55:00"
  }
}""")),
                "utf-8", "quoted-printable")))

fixture("flight-local-times-unknown-airport.eml", message(
    '"Island Hopper" <booking@islandhopper.example>', "eva@guest.example.net",
    "Booking IH-5521", "IH-5521@islandhopper.example",
    "Wed, 02 Jun 2027 06:12:00 +0000",
    single_html(html_page("Booking", "utf-8", row("Flight", "IH 12"), script("""{
  "@context": "http://schema.org",
  "@type": "FlightReservation",
  "reservationNumber": "IH5521",
  "reservationStatus": "http://schema.org/Confirmed",
  "underName": { "@type": "Person", "name": "Eva Green" },
  "reservationFor": {
    "@type": "Flight",
    "flightNumber": "QX12",
    "airline": { "@type": "Airline", "name": "Island Hopper", "iataCode": "QX" },
    "departureAirport": { "@type": "Airport", "name": "Hidden Strip", "iataCode": "QQX" },
    "departureTime": "2027-07-01T10:00:00",
    "arrivalAirport": { "@type": "Airport", "name": "Dublin", "iataCode": "DUB" },
    "arrivalTime": "2027-07-01T13:30:00+01:00"
  }
}""")), "utf-8", "quoted-printable")))

# ---------------------------------------------------------------- a forwarded message
inner = message(
    '"United Airlines" <notifications@united.example>', "john@guest.example.net",
    "Your flight RXJ34P", "RXJ34P.confirm@united.example", "Tue, 02 Mar 2027 10:00:00 -0800",
    single_html(html_page("Your flight", "utf-8", row("Flight", "UA 110"), script("""{
  "@context": "http://schema.org",
  "@type": "FlightReservation",
  "reservationNumber": "RXJ34P",
  "reservationStatus": "http://schema.org/Confirmed",
  "underName": { "@type": "Person", "name": "John Green" },
  "reservationFor": {
    "@type": "Flight", "flightNumber": "UA110",
    "airline": { "@type": "Airline", "name": "United", "iataCode": "UA" },
    "departureAirport": { "@type": "Airport", "iataCode": "SFO" }, "departureTime": "2027-03-04T20:15:00-08:00",
    "arrivalAirport": { "@type": "Airport", "iataCode": "JFK" }, "arrivalTime": "2027-03-05T06:30:00-05:00"
  }
}""")), "utf-8", "quoted-printable"))
fixture("forwarded-rfc822.eml", message(
    "Eva Green <eva@guest.example.net>", "Eva Green <eva@guest.example.net>",
    "Fwd: Your flight RXJ34P + dinner", "fwd-1@guest.example.net",
    "Wed, 03 Mar 2027 08:00:00 +0100",
    multipart("mixed", "fwd_boundary_1", [
        leaf("text/html", html_page("Fwd", "utf-8", row("Note", "John's flight is attached; our table is below."), script("""{
  "@context": "http://schema.org",
  "@type": "FoodEstablishmentReservation",
  "reservationNumber": "OT-11830",
  "reservationStatus": "http://schema.org/Confirmed",
  "underName": { "@type": "Person", "name": "Eva Green" },
  "reservationFor": { "@type": "Restaurant", "name": "Zuni Café",
    "address": { "@type": "PostalAddress", "streetAddress": "1658 Market St", "addressLocality": "San Francisco", "addressCountry": "US" } },
  "startTime": "2027-03-05T19:00:00-08:00",
  "partySize": "2"
}""")), "utf-8", "quoted-printable"),
        b'Content-Type: message/rfc822\r\nContent-Disposition: inline\r\n\r\n' + inner,
    ])))

# ---------------------------------------------------------------- the same item in both syntaxes
both_jsonld = script("""{
  "@context": "http://schema.org",
  "@type": "EventReservation",
  "reservationNumber": "E123456789",
  "reservationStatus": "http://schema.org/Confirmed",
  "underName": { "@type": "Person", "name": "Eva Green" },
  "reservationFor": {
    "@type": "Event",
    "name": "Foo Fighters Concert",
    "startDate": "2027-03-06T19:30:00-08:00",
    "location": {
      "@type": "Place",
      "name": "AT&T Park",
      "address": { "@type": "PostalAddress", "streetAddress": "24 Willie Mays Plaza", "addressLocality": "San Francisco", "addressRegion": "CA", "addressCountry": "US" }
    }
  }
}""")
both_microdata = """<div itemscope itemtype="http://schema.org/EventReservation">
  <meta itemprop="reservationNumber" content="E123456789"/>
  <link itemprop="reservationStatus" href="http://schema.org/Confirmed"/>
  <div itemprop="underName" itemscope itemtype="http://schema.org/Person"><meta itemprop="name" content="Eva Green"/></div>
  <div itemprop="reservationFor" itemscope itemtype="http://schema.org/Event">
    <span itemprop="name">Foo Fighters Concert</span>
    <meta itemprop="startDate" content="2027-03-06T19:30:00-08:00"/>
    <div itemprop="location" itemscope itemtype="http://schema.org/Place">
      <span itemprop="name">AT&amp;T Park</span>
      <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress">
        <meta itemprop="streetAddress" content="24 Willie Mays Plaza"/>
        <meta itemprop="addressLocality" content="San Francisco"/>
        <meta itemprop="addressRegion" content="CA"/>
        <meta itemprop="addressCountry" content="US"/>
      </div>
    </div>
  </div>
</div>
"""
fixture("both-syntaxes.eml", message(
    '"Ticketmaster" <customer_support@email.ticketmaster.example>', "eva@guest.example.net",
    "Your Foo Fighters tickets", "E123456789@email.ticketmaster.example",
    "Mon, 01 Feb 2027 10:00:00 -0800",
    alternative("tm_both_E123456789", "Foo Fighters, AT&T Park, 6 March 2027 7:30 PM\n",
                html_page("Your tickets", "utf-8", "<tr><td>" + both_microdata + "</td></tr>", both_jsonld),
                "utf-8", "quoted-printable")))

# ---------------------------------------------------------------- telling files apart
fixture("mbox-from-line.eml", message(
    '"OpenTable" <reservations@opentable.example>', "Eva Green <eva@guest.example.net>",
    "Your reservation at Cafe Lumiere is confirmed", "r88412.1717@mail.opentable.example",
    "Tue, 01 Jun 2027 10:02:11 +0000",
    single_html(html_page("Reservation", "utf-8", row("Restaurant", "Café Lumière"), restaurant_jsonld),
                "utf-8", "base64"),
    mbox="From bounces@opentable.example Tue Jun  1 10:02:11 2027"))

with_bom = "\ufeff\r\n  \r\n" + html_page("Booking page", "utf-8", row("Restaurant", "Café Lumière"), restaurant_jsonld)
FIXTURES["page-with-bom.html"] = with_bom.encode("utf-8")

os.makedirs(OUT, exist_ok=True)
for name, data in sorted(FIXTURES.items()):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    print(f"{name}: {len(data)} bytes")
